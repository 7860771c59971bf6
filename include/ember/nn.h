// Ember's nn API in one include: modules, layers, losses, init, save/load.
#pragma once

#include "ember/nn/activation.h"
#include "ember/nn/container.h"
#include "ember/nn/conv.h"
#include "ember/nn/dropout.h"
#include "ember/nn/embedding.h"
#include "ember/nn/flatten.h"
#include "ember/nn/init.h"
#include "ember/nn/linear.h"
#include "ember/nn/loss.h"
#include "ember/nn/module.h"
#include "ember/nn/normalization.h"
#include "ember/nn/pooling.h"
#include "ember/nn/serialize.h"
#include "ember/nn/rnn.h"
#include "ember/nn/attention.h"
#include "ember/nn/transformer.h"
