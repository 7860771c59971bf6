// The data pipeline in one include: datasets, samplers, DataLoader, transforms.
#pragma once

#include "ember/data/cached_dataset.h"
#include "ember/data/collate.h"
#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/datasets/csv.h"
#include "ember/data/datasets/idx.h"
#include "ember/data/datasets/image_folder.h"
#include "ember/data/datasets/text.h"
#include "ember/data/image_preprocess.h"
#include "ember/data/distributed_sampler.h"
#include "ember/data/sample.h"
#include "ember/data/sample_generator.h"
#include "ember/data/sampler.h"
#include "ember/data/transforms.h"
