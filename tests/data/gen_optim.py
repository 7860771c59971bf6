#!/usr/bin/python3
"""Reference trajectories for tests/optim (optimizers, schedulers, clipping), by PyTorch 1.13.

Run: /usr/bin/python3 tests/data/gen_optim.py > tests/data/optim_golden.txt
Every input is closed-form (sin/cos of aranges) so the C++ tests build the same
tensors; the C++ side lists the same cases by name with the same options.

Lines:
  opt|<case>|<step>|<W values then b values after that step>
  sched|<case>|<step>|<lr per group>|<momentum (or beta1) per group, or ->
  clip|<case>|<total norm>|<clipped grad values>
"""
import math

import torch
from torch.optim import SGD, Adam, AdamW, RMSprop, Adagrad
from torch.optim import lr_scheduler as ls

d = torch.float64
STEPS = 20


def fmt(vals):
    return " ".join(repr(float(v)) for v in vals)


def problem():
    W = (torch.cos(torch.arange(12, dtype=d) * 0.5) * 0.5).view(3, 4).requires_grad_()
    b = (torch.arange(3, dtype=d) * 0.1 - 0.1).requires_grad_()
    return W, b


def loss_fn(W, b):
    x = torch.sin(torch.arange(20, dtype=d) * 0.7).view(5, 4)
    y = torch.cos(torch.arange(15, dtype=d) * 0.3).view(5, 3)
    return ((torch.tanh(x @ W.t() + b) - y) ** 2).sum()


OPT_CASES = {
    "sgd": lambda W, b: SGD([W, b], lr=0.1),
    "sgd_momentum_dampening_wd": lambda W, b: SGD([W, b], lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda W, b: SGD([W, b], lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    "sgd_maximize": lambda W, b: SGD([W, b], lr=0.02, momentum=0.5, maximize=True),
    "sgd_groups": lambda W, b: SGD([{"params": [W], "lr": 0.1, "momentum": 0.9}, {"params": [b]}], lr=0.05),
    "adam": lambda W, b: Adam([W, b], lr=0.01),
    "adam_amsgrad_wd": lambda W, b: Adam([W, b], lr=0.02, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1,
                                         amsgrad=True),
    "adam_maximize": lambda W, b: Adam([W, b], lr=0.01, maximize=True),
    "adam_groups": lambda W, b: Adam([{"params": [W]},
                                      {"params": [b], "lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1}],
                                     lr=0.01),
    "adamw": lambda W, b: AdamW([W, b], lr=0.01),
    "adamw_amsgrad": lambda W, b: AdamW([W, b], lr=0.02, weight_decay=0.1, amsgrad=True),
    "adamw_maximize": lambda W, b: AdamW([W, b], lr=0.01, maximize=True),
    "rmsprop": lambda W, b: RMSprop([W, b], lr=0.01),
    "rmsprop_centered_momentum_wd": lambda W, b: RMSprop([W, b], lr=0.01, alpha=0.9, momentum=0.8, centered=True,
                                                         weight_decay=0.05),
    "rmsprop_momentum_maximize": lambda W, b: RMSprop([W, b], lr=0.005, momentum=0.9, maximize=True),
    "rmsprop_centered": lambda W, b: RMSprop([W, b], lr=0.01, centered=True),
    "adagrad": lambda W, b: Adagrad([W, b], lr=0.1),
    "adagrad_options": lambda W, b: Adagrad([W, b], lr=0.1, lr_decay=0.01, weight_decay=0.05,
                                            initial_accumulator_value=0.1, eps=1e-8),
    "adagrad_maximize": lambda W, b: Adagrad([W, b], lr=0.05, maximize=True),
}

for name, make in OPT_CASES.items():
    W, b = problem()
    opt = make(W, b)
    for step in range(1, STEPS + 1):
        opt.zero_grad()
        loss_fn(W, b).backward()
        opt.step()
        print(f"opt|{name}|{step}|{fmt(W.detach().flatten().tolist() + b.detach().tolist())}")


def sgd2(momentum=0.0):
    W, b = problem()
    return SGD([{"params": [W]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=momentum)


def adam2():
    W, b = problem()
    return Adam([{"params": [W]}, {"params": [b], "lr": 0.01}], lr=0.1)


def momentum_of(opt):
    g = opt.param_groups
    if "betas" in g[0]:
        return [grp["betas"][0] for grp in g]
    return [grp["momentum"] for grp in g]


def sequential(opt):
    return ls.SequentialLR(opt, [ls.LinearLR(opt, start_factor=0.1, total_iters=4),
                                 ls.CosineAnnealingLR(opt, T_max=10, eta_min=0.001),
                                 ls.ExponentialLR(opt, gamma=0.8)], milestones=[5, 12])


SCHED_CASES = {
    "steplr": (sgd2, lambda o: ls.StepLR(o, step_size=3, gamma=0.5), False),
    "multisteplr": (sgd2, lambda o: ls.MultiStepLR(o, milestones=[9, 2, 5, 5], gamma=0.3), False),
    "exponentiallr": (sgd2, lambda o: ls.ExponentialLR(o, gamma=0.9), False),
    "cosine": (sgd2, lambda o: ls.CosineAnnealingLR(o, T_max=7, eta_min=0.001), False),
    "linear_warmup": (sgd2, lambda o: ls.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=6), False),
    "linear_decay": (sgd2, lambda o: ls.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10), False),
    "onecycle_sgd_cos": (lambda: sgd2(0.9), lambda o: ls.OneCycleLR(o, max_lr=[0.5, 0.05], total_steps=25), True),
    "onecycle_adam_linear_three_phase": (
        adam2, lambda o: ls.OneCycleLR(o, max_lr=0.01, epochs=5, steps_per_epoch=6, pct_start=0.25,
                                       anneal_strategy="linear", three_phase=True, div_factor=10.0,
                                       final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9), True),
    "onecycle_no_momentum": (sgd2, lambda o: ls.OneCycleLR(o, max_lr=1.0, total_steps=24, pct_start=0.4,
                                                           cycle_momentum=False), False),
    "sequential": (sgd2, sequential, False),
}

for name, (make_opt, make_sched, with_momentum) in SCHED_CASES.items():
    opt = make_opt()
    sched = make_sched(opt)
    rows = [(0, sched.get_last_lr(), momentum_of(opt) if with_momentum else None)]
    for step in range(1, 25):
        opt.step()
        sched.step()
        rows.append((step, sched.get_last_lr(), momentum_of(opt) if with_momentum else None))
    for step, lrs, moms in rows:
        print(f"sched|{name}|{step}|{fmt(lrs)}|{fmt(moms) if moms is not None else '-'}")

METRICS = [1.0, 0.9, 0.95, 0.91, 0.92, 0.905, 0.8, 0.85, 0.85, 0.85, 0.85, 0.79, 0.8, 0.8, 0.8,
           0.8, 0.8, 0.8, 0.8, 0.8, 0.7, 0.8, 0.8, 0.8, 0.8]
PLATEAU_CASES = {
    "plateau_min_rel": dict(mode="min", factor=0.5, patience=2, threshold=0.01, threshold_mode="rel", cooldown=1,
                            min_lr=0.01),
    "plateau_max_abs": dict(mode="max", factor=0.2, patience=1, threshold=0.02, threshold_mode="abs", cooldown=0,
                            min_lr=[0.001, 0.0005]),
}
for name, kw in PLATEAU_CASES.items():
    opt = sgd2()
    sched = ls.ReduceLROnPlateau(opt, **kw)
    for step, m in enumerate(METRICS, start=1):
        sched.step(m)
        print(f"sched|{name}|{step}|{fmt([g['lr'] for g in opt.param_groups])}|-")


def clip_params():
    p1 = torch.zeros(3, 4, dtype=d, requires_grad=True)
    p2 = torch.zeros(5, dtype=d, requires_grad=True)
    p1.grad = torch.sin(torch.arange(12, dtype=d) * 0.9).view(3, 4) * 2
    p2.grad = torch.cos(torch.arange(5, dtype=d) * 1.3) - 0.5
    return p1, p2


for name, max_norm, norm_type in [("l2", 1.0, 2.0), ("l1", 2.5, 1.0), ("inf", 0.5, math.inf),
                                  ("l3", 1.5, 3.0), ("l2_no_clip", 100.0, 2.0)]:
    p1, p2 = clip_params()
    total = torch.nn.utils.clip_grad_norm_([p1, p2], max_norm, norm_type)
    print(f"clip|{name}|{float(total)!r}|{fmt(p1.grad.flatten().tolist() + p2.grad.tolist())}")
p1, p2 = clip_params()
torch.nn.utils.clip_grad_value_([p1, p2], 0.7)
print(f"clip|value_0.7|0.0|{fmt(p1.grad.flatten().tolist() + p2.grad.tolist())}")
