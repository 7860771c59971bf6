// `ember bench dist` (issue 18): the data-parallel benchmark.
//
//   mpirun -np 2 ember bench dist     measured: per model, the median step
//       time, allreduce time, exposed (not hidden) communication and the
//       fraction of allreduce time hidden behind backward.
//   ember bench dist --simulate       one process: the measured backward
//       timeline replayed with modeled ring allreduce for N = 2..256 ranks at
//       10/25/100 Gbit/s and several bucket sizes (docs/distributed.md).
//
// Models: the zoo's W1 CNN (28x28, batch 32 per rank), ResNet-18 (CIFAR
// 32x32, batch 8 per rank) and the LSTM classifier (vocab 20000, batch 32 x
// 64 tokens). One intra-op thread per rank unless OMP_NUM_THREADS is set.
// bench/dist_overlap runs the same code as a standalone program.
#include "dist_bench_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "ember/distributed/data_parallel.h"
#include "ember/distributed/mpi.h"
#include "ember/distributed/simulate.h"
#include "ember/ember.h"
#include "ember/train/models.h"


namespace ember::cli {
namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Workload {
  std::string name;
  nn::ModulePtr model;
  std::function<Tensor(nn::Module&)> forward;  // logits of one batch
  Tensor target;
};

Workload make(const std::string& name) {
  manual_seed(0);
  Workload w{name, nullptr, nullptr, Tensor()};
  if (name == "cnn") {
    w.model = std::make_shared<train::CNN>(train::CNNOptions{});
    Tensor x = randn({32, 1, 28, 28});
    w.forward = [x](nn::Module& m) { return m.forward(x); };
    w.target = randint(0, 10, {32}, kInt64);
  } else if (name == "resnet18") {
    w.model = std::make_shared<train::ResNet>(train::ResNetOptions{});
    Tensor x = randn({8, 3, 32, 32});
    w.forward = [x](nn::Module& m) { return m.forward(x); };
    w.target = randint(0, 10, {8}, kInt64);
  } else {
    train::LSTMClassifierOptions o;
    o.vocab_size = 20000;
    w.model = std::make_shared<train::LSTMClassifier>(o);
    Tensor tokens = randint(1, 20000, {32, 64}, kInt64), lengths = full({32}, int64_t{64}, kInt64);
    w.forward = [tokens, lengths](nn::Module& m) {
      return static_cast<train::LSTMClassifier&>(m).forward(tokens, lengths);
    };
    w.target = randint(0, 2, {32}, kInt64);
  }
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

struct Sample {
  double forward_s, backward_s, optimizer_s, comm_s, exposed_s, hidden;
  std::vector<double> ready;  // relative to backward start
};

std::vector<Sample> run(Workload& w, const distributed::ProcessGroupPtr& pg, int steps) {
  nn::DistributedDataParallel ddp(w.model, pg);
  optim::SGD opt(w.model->parameters(), {.lr = 0.01});
  std::vector<Sample> out;
  for (int s = 0; s < steps + 2; ++s) {
    opt.zero_grad();
    // Ranks start each step together (not timed): otherwise the time one
    // rank waits for a late peer would count as exposed communication.
    pg->barrier();
    double t0 = seconds();
    ddp.prepare_forward();
    Tensor loss = nn::functional::cross_entropy(w.forward(*w.model), w.target);
    double t1 = seconds();
    loss.backward();
    double t2 = seconds();
    opt.step();
    double t3 = seconds();
    const auto& st = ddp.last_stats();
    Sample x{t1 - t0, st.backward_end_s - t1, t3 - t2, st.comm_s, st.exposed_s, st.hidden_fraction(), {}};
    for (double r : st.param_ready_s) x.ready.push_back(std::isnan(r) ? 0.0 : r - t1);
    if (s >= 2) out.push_back(std::move(x));  // 2 warm-up steps
  }
  return out;
}

void measured(const distributed::ProcessGroupPtr& pg, int steps) {
  if (pg->rank() == 0)
    std::printf("%d ranks, %d steps after 2 warm-up; medians\n%-9s %9s %9s %9s %9s %8s %8s\n", pg->size(), steps,
                "model", "step ms", "fwd ms", "bwd ms", "comm ms", "exposed", "hidden");
  for (const char* name : {"cnn", "resnet18", "lstm"}) {
    Workload w = make(name);
    std::vector<Sample> v = run(w, pg, steps);
    std::vector<double> step, fwd, bwd, comm, exposed, hidden;
    for (const Sample& x : v) {
      fwd.push_back(x.forward_s);
      bwd.push_back(x.backward_s);
      step.push_back(x.forward_s + x.backward_s + x.exposed_s + x.optimizer_s);
      comm.push_back(x.comm_s);
      exposed.push_back(x.exposed_s);
      hidden.push_back(x.hidden);
    }
    if (pg->rank() == 0)
      std::printf("%-9s %9.1f %9.1f %9.1f %9.1f %9.1f %7.0f%%\n", name, 1e3 * median(step), 1e3 * median(fwd),
                  1e3 * median(bwd), 1e3 * median(comm), 1e3 * median(exposed), 100 * median(hidden));
  }
}

void simulated(int steps) {
  auto pg = distributed::local_process_group();
  for (const char* name : {"cnn", "resnet18", "lstm"}) {
    Workload w = make(name);
    std::vector<Sample> v = run(w, pg, steps);
    // The median step's timeline (by total time).
    std::sort(v.begin(), v.end(), [](const Sample& a, const Sample& b) {
      return a.forward_s + a.backward_s + a.optimizer_s < b.forward_s + b.backward_s + b.optimizer_s;
    });
    const Sample& m = v[v.size() / 2];
    distributed::StepTimeline t;
    t.forward_s = m.forward_s;
    t.backward_s = m.backward_s;
    t.optimizer_s = m.optimizer_s;
    int64_t bytes = 0;
    for (const Tensor& p : w.model->parameters()) {
      t.param_bytes.push_back(static_cast<int64_t>(p.nbytes()));
      bytes += static_cast<int64_t>(p.nbytes());
    }
    t.param_ready_s = m.ready;
    std::printf("\n%s: %.1f MB of gradients; measured single-rank step %.1f ms (forward %.1f, backward %.1f, "
                "optimizer %.1f)\n",
                name, bytes / 1e6, 1e3 * (t.forward_s + t.backward_s + t.optimizer_s), 1e3 * t.forward_s,
                1e3 * t.backward_s, 1e3 * t.optimizer_s);
    std::printf("scaling efficiency (buckets 1 + 25 MiB; 5 us per ring step)\n%-10s", "Gbit/s");
    const std::vector<int> ranks = {2, 4, 8, 16, 32, 64, 128, 256};
    for (int n : ranks) std::printf(" %6d", n);
    std::printf("\n");
    for (double gbit : {10.0, 25.0, 100.0}) {
      std::printf("%-10.0f", gbit);
      for (int n : ranks)
        std::printf(" %5.1f%%", 100 * distributed::simulate_step(t, n, {gbit, 5e-6}).efficiency);
      std::printf("\n");
    }
    // The same step on faster compute (the gradients' arrival scaled too):
    // communication is then a larger share.
    std::printf("compute x10 faster, 25 Gbit/s:  ");
    for (double speedup : {10.0, 100.0}) {
      distributed::StepTimeline f = t;
      f.forward_s /= speedup;
      f.backward_s /= speedup;
      f.optimizer_s /= speedup;
      for (double& r : f.param_ready_s) r /= speedup;
      if (speedup == 100.0) std::printf("\ncompute x100 faster, 25 Gbit/s: ");
      for (int n : ranks) std::printf(" %5.1f%%", 100 * distributed::simulate_step(f, n, {25.0, 5e-6}).efficiency);
    }
    std::printf("\nbucket size at 25 Gbit/s, 64 ranks: ");
    for (double cap : {1.0, 5.0, 25.0, 100.0, 1e6}) {
      auto s = distributed::simulate_step(t, 64, {25.0, 5e-6}, std::min(1.0, cap) + (cap >= 1e6 ? cap : 0.0), cap);
      std::printf(" %s %.1f%% (%lld buckets)", cap >= 1e6 ? "one bucket" : fmt::format("{} MiB", cap).c_str(),
                  100 * s.efficiency, static_cast<long long>(s.buckets));
    }
    std::printf("\n");
  }
}

}  // namespace

int run_dist_bench(bool simulate, int steps) {
  EMBER_CHECK(steps >= 1, "bench dist: --steps must be at least 1, got {}", steps);
  if (!std::getenv("OMP_NUM_THREADS")) set_num_threads(1);
  if (simulate) {
    simulated(steps);
    return 0;
  }
  measured(distributed::init_process_group("mpi"), steps);
  return 0;
}

}  // namespace ember::cli
