// Optimizers, gradient clipping and learning-rate schedulers (torch.optim).
#pragma once

#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/clip_grad.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/one_cycle_lr.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/reduce_lr_on_plateau.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/sequential_lr.h"
#include "ember/optim/serialize.h"
#include "ember/optim/sgd.h"
