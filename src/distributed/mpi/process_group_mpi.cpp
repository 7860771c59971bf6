// The MPI backend of ProcessGroup.
//
// Note [communication thread]
// MPI's non-blocking collectives only progress inside MPI calls, so an
// MPI_Iallreduce started during backward would mostly run at the final wait.
// Instead every collective is queued to one communication thread per group
// that runs them in queue order (the launch order, identical on every rank)
// while the caller computes; Work::wait() waits for that thread. The thread
// polls non-blocking requests with a short sleep between tests, so it does
// not spin a core away from backward, and gives up with an error after the
// group's timeout (a rank died, raised, or launched another collective).
//
// Note [fixed reduction order]
// Sums (all_reduce, reduce_scatter) run Ember's own ring over MPI
// point-to-point messages on the duplicated communicator: block c of the
// result is (((x[c+1] + x[c+2]) + ...) + x[c]) over the ranks, an order
// fixed by the world size alone, then shared unchanged by every rank. MPI's
// own MPI_Allreduce may pick algorithms by message size and installation,
// which PyTorch-style bitwise reproducibility cannot rely on. The ring moves
// 2(N-1)/N x bytes per rank, the cost docs/distributed.md models.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/core/error.h"
#include "ember/distributed/mpi.h"
#include "kernels/wrapping.h"
#include "launcher.h"

namespace ember::distributed {
namespace {

using Clock = std::chrono::steady_clock;

std::string mpi_error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, buf, &len);
  return std::string(buf, static_cast<size_t>(len));
}

void mpi_check(int code, const char* what) {
  EMBER_CHECK(code == MPI_SUCCESS, "{}: MPI error: {}", what, mpi_error_string(code));
}

// MPI is initialized once per process and finalized after its last user:
// the one process-wide object here, as MPI itself is process-wide.
class MpiEnv {
 public:
  MpiEnv() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    EMBER_CHECK(!finalized, "init_process_group: MPI was already finalized in this process; MPI can be "
                            "initialized once per process (keep one ProcessGroup alive)");
    int provided = 0;
    if (!initialized) {
      mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      owns_ = true;
    } else {
      MPI_Query_thread(&provided);
    }
    EMBER_CHECK(provided == MPI_THREAD_MULTIPLE,
                "init_process_group: MPI provides thread level {} but Ember communicates from its own thread and "
                "needs MPI_THREAD_MULTIPLE ({}){}",
                provided, MPI_THREAD_MULTIPLE,
                owns_ ? "" : "; call MPI_Init_thread with MPI_THREAD_MULTIPLE before init_process_group");
  }
  ~MpiEnv() {
    if (owns_) MPI_Finalize();
  }
  MpiEnv(const MpiEnv&) = delete;
  MpiEnv& operator=(const MpiEnv&) = delete;

  static std::shared_ptr<MpiEnv> get() {
    static std::mutex mu;
    static std::weak_ptr<MpiEnv> current;
    std::lock_guard lock(mu);
    auto env = current.lock();
    if (!env) {
      env = std::make_shared<MpiEnv>();
      current = env;
    }
    return env;
  }

 private:
  bool owns_ = false;
};

class MpiWork final : public Work {
 public:
  MpiWork(std::string name, std::function<void(Clock::time_point)> run)
      : name_(std::move(name)), run_(std::move(run)) {}

  void wait() override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    if (!error_.empty()) throw Error(error_);
  }
  bool is_completed() override {
    std::lock_guard lock(mu_);
    return done_;
  }
  double duration_s() const override {
    std::lock_guard lock(mu_);
    return duration_s_;
  }

  // On the communication thread.
  void execute(double timeout_s, const std::string& broken) {
    auto t0 = Clock::now();
    std::string error = broken.empty() ? std::string() : fmt::format("{}: {}", name_, broken);
    if (error.empty()) {
      try {
        run_(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s)));
      } catch (const std::exception& e) {
        error = fmt::format("{}: {}", name_, e.what());
      }
    }
    std::lock_guard lock(mu_);
    duration_s_ = std::chrono::duration<double>(Clock::now() - t0).count();
    error_ = std::move(error);
    done_ = true;
    run_ = nullptr;  // drops the tensors it held
    cv_.notify_all();
  }
  const std::string& name() const { return name_; }
  bool failed() const {
    std::lock_guard lock(mu_);
    return !error_.empty();
  }
  std::string error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  std::string name_;
  std::function<void(Clock::time_point)> run_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string error_;
  double duration_s_ = 0;
};

// Element-wise reduction of `in` into `acc` as acc = in op acc (the ring's
// fixed order: the incoming partial result first).
template <typename T>
void reduce_into(T* acc, const T* in, int64_t n, ReduceOp op) {
  if (op == ReduceOp::Max) {
    for (int64_t i = 0; i < n; ++i) acc[i] = std::max(in[i], acc[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) acc[i] = wrapping_add(in[i], acc[i]);  // Note [integer wrap]
  }
}

void reduce_bytes(ScalarType dtype, void* acc, const void* in, int64_t n, ReduceOp op) {
  switch (dtype) {
    case kFloat32: return reduce_into(static_cast<float*>(acc), static_cast<const float*>(in), n, op);
    case kFloat64: return reduce_into(static_cast<double*>(acc), static_cast<const double*>(in), n, op);
    case kInt32: return reduce_into(static_cast<int32_t*>(acc), static_cast<const int32_t*>(in), n, op);
    case kInt64: return reduce_into(static_cast<int64_t*>(acc), static_cast<const int64_t*>(in), n, op);
    case kInt16: return reduce_into(static_cast<int16_t*>(acc), static_cast<const int16_t*>(in), n, op);
    case kInt8: return reduce_into(static_cast<int8_t*>(acc), static_cast<const int8_t*>(in), n, op);
    case kUInt8: return reduce_into(static_cast<uint8_t*>(acc), static_cast<const uint8_t*>(in), n, op);
    default: EMBER_ERROR("reduce: dtype {} is not supported", to_string(dtype));
  }
}

void divide_by(ScalarType dtype, void* data, int64_t n, int world) {
  if (dtype == kFloat32) {
    auto* p = static_cast<float*>(data);
    for (int64_t i = 0; i < n; ++i) p[i] /= static_cast<float>(world);
  } else if (dtype == kFloat64) {
    auto* p = static_cast<double*>(data);
    for (int64_t i = 0; i < n; ++i) p[i] /= static_cast<double>(world);
  }
}

class ProcessGroupMPI final : public ProcessGroup {
 public:
  explicit ProcessGroupMPI(double timeout_s) : env_(MpiEnv::get()), timeout_s_(timeout_s) {
    mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    thread_ = std::thread([this] { loop(); });
  }

  ~ProcessGroupMPI() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    thread_.join();
    if (timed_out_) {
      // Requests of the timed-out collective are still posted: MPI cannot be
      // finalized cleanly, so the job ends here (the launcher stops the rest).
      fmt::print(stderr, "ember rank {}: aborting the job after a collective timed out: {}\n", rank_, broken_);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

  WorkPtr all_reduce_async(const Tensor& t, ReduceOp op) override {
    check_reduce_op("all_reduce", t, op);
    return enqueue(fmt::format("all_reduce({})", reduce_op_name(op)), [this, t, op](Clock::time_point deadline) {
      ring_all_reduce(t.data_ptr(), t.dtype(), t.numel(), op, deadline);
    });
  }

  WorkPtr broadcast_async(const Tensor& t, int root) override {
    check_collective_tensor("broadcast", t);
    EMBER_CHECK(root >= 0 && root < size_, "broadcast: root {} is not a rank of a world of size {}", root, size_);
    return enqueue("broadcast", [this, t, root](Clock::time_point deadline) {
      auto* p = static_cast<char*>(t.data_ptr());
      size_t bytes = t.nbytes();
      for (size_t off = 0; off < bytes; off += kPiece) {
        int n = static_cast<int>(std::min(kPiece, bytes - off));
        MPI_Request req;
        mpi_check(MPI_Ibcast(p + off, n, MPI_BYTE, root, comm_, &req), "broadcast");
        wait_all(&req, 1, deadline, "broadcast");
      }
    });
  }

  WorkPtr all_gather_async(const Tensor& output, const Tensor& input) override {
    check_gather_sizes("all_gather", output, input, size_, "output", "input");
    EMBER_CHECK(input.nbytes() <= static_cast<size_t>(INT_MAX), "all_gather: input of {} bytes is over MPI's {} limit",
                input.nbytes(), INT_MAX);
    return enqueue("all_gather", [this, output, input](Clock::time_point deadline) {
      int n = static_cast<int>(input.nbytes());
      MPI_Request req;
      mpi_check(MPI_Iallgather(input.data_ptr(), n, MPI_BYTE, output.data_ptr(), n, MPI_BYTE, comm_, &req),
                "all_gather");
      wait_all(&req, 1, deadline, "all_gather");
    });
  }

  WorkPtr reduce_scatter_async(const Tensor& output, const Tensor& input, ReduceOp op) override {
    check_gather_sizes("reduce_scatter", input, output, size_, "input", "output");
    check_reduce_op("reduce_scatter", input, op);
    return enqueue(fmt::format("reduce_scatter({})", reduce_op_name(op)),
                   [this, output, input, op](Clock::time_point deadline) {
                     // The ring reduces in place: work on a copy, the input stays as given.
                     std::vector<char> scratch(input.nbytes());
                     std::memcpy(scratch.data(), input.data_ptr(), scratch.size());
                     int64_t n = input.numel();
                     ring_reduce_scatter(scratch.data(), input.dtype(), n, op, deadline);
                     size_t es = input.element_size();
                     std::memcpy(output.data_ptr(), scratch.data() + static_cast<size_t>(begin(rank_, n)) * es,
                                 output.nbytes());
                     if (op == ReduceOp::Avg) divide_by(output.dtype(), output.data_ptr(), output.numel(), size_);
                   });
  }

  WorkPtr barrier_async() override {
    return enqueue("barrier", [this](Clock::time_point deadline) {
      MPI_Request req;
      mpi_check(MPI_Ibarrier(comm_, &req), "barrier");
      wait_all(&req, 1, deadline, "barrier");
    });
  }

  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

 private:
  static constexpr size_t kPiece = size_t{1} << 30;  // bytes per MPI message (counts are int)

  WorkPtr enqueue(std::string name, std::function<void(Clock::time_point)> run) {
    std::lock_guard lock(mu_);
    auto work = std::make_shared<MpiWork>(fmt::format("{} #{}", name, ++seq_), std::move(run));
    queue_.push_back(work);
    cv_.notify_all();
    return work;
  }

  void loop() {
    for (;;) {
      std::shared_ptr<MpiWork> work;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work->execute(timeout_s_, broken_);
      // A failed collective leaves the ranks out of step: later ones fail at
      // once with the first error rather than pairing wrong messages.
      if (work->failed() && broken_.empty())
        broken_ = fmt::format("process group unusable after an earlier failure: {}", work->error());
    }
  }

  // Polls until every request completes; after the deadline raises naming
  // the collective (see Note [communication thread]).
  void wait_all(MPI_Request* reqs, int n, Clock::time_point deadline, const char* what) {
    for (int spins = 0;; ++spins) {
      int flag = 0;
      mpi_check(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE), what);
      if (flag) return;
      if (Clock::now() > deadline) {
        timed_out_ = true;
        EMBER_ERROR("{} on rank {} of {} did not complete within {} s: another rank died, raised, or launched a "
                    "different collective (every rank must launch the same collectives in the same order)",
                    what, rank_, size_, timeout_s_);
      }
      if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(20));
      else std::this_thread::yield();
    }
  }

  // Exchanges `bytes` from send (to the right neighbour) and into recv (from
  // the left one), in pieces MPI's int counts can hold.
  void ring_exchange(const char* send, char* recv, size_t bytes, Clock::time_point deadline, const char* what) {
    int right = (rank_ + 1) % size_, left = (rank_ + size_ - 1) % size_;
    for (size_t off = 0; off < bytes; off += kPiece) {
      int n = static_cast<int>(std::min(kPiece, bytes - off));
      MPI_Request reqs[2];
      mpi_check(MPI_Irecv(recv + off, n, MPI_BYTE, left, 0, comm_, &reqs[0]), what);
      mpi_check(MPI_Isend(send + off, n, MPI_BYTE, right, 0, comm_, &reqs[1]), what);
      wait_all(reqs, 2, deadline, what);
    }
  }

  // Block c of n elements: [begin(c), begin(c + 1)).
  int64_t begin(int64_t c, int64_t n) const { return c * n / size_; }

  // After it, block r of `data` on rank r holds the reduction over all ranks
  // (Note [fixed reduction order]).
  void ring_reduce_scatter(void* data, ScalarType dtype, int64_t n, ReduceOp op, Clock::time_point deadline) {
    if (size_ == 1) return;
    auto* p = static_cast<char*>(data);
    size_t es = element_size(dtype);
    std::vector<char> incoming(static_cast<size_t>((n + size_ - 1) / size_ + 1) * es);
    for (int s = 0; s < size_ - 1; ++s) {
      int64_t send_block = ((rank_ - 1 - s) % size_ + size_) % size_;
      int64_t recv_block = ((rank_ - 2 - s) % size_ + size_) % size_;
      int64_t sb = begin(send_block, n), sl = begin(send_block + 1, n) - sb;
      int64_t rb = begin(recv_block, n), rl = begin(recv_block + 1, n) - rb;
      // Blocks differ in length by at most one element: send and receive
      // counts are exact for each block, so a pair always matches.
      exchange_unequal(p + sb * static_cast<int64_t>(es), static_cast<size_t>(sl) * es, incoming.data(),
                       static_cast<size_t>(rl) * es, deadline, "all_reduce");
      reduce_bytes(dtype, p + rb * static_cast<int64_t>(es), incoming.data(), rl, op);
    }
  }

  void exchange_unequal(const char* send, size_t send_bytes, char* recv, size_t recv_bytes,
                        Clock::time_point deadline, const char* what) {
    if (send_bytes == recv_bytes) return ring_exchange(send, recv, send_bytes, deadline, what);
    // Unequal lengths happen only for small remainders: one message each.
    EMBER_CHECK(send_bytes <= kPiece && recv_bytes <= kPiece, "{}: block over {} bytes", what, kPiece);
    int right = (rank_ + 1) % size_, left = (rank_ + size_ - 1) % size_;
    MPI_Request reqs[2];
    mpi_check(MPI_Irecv(recv, static_cast<int>(recv_bytes), MPI_BYTE, left, 0, comm_, &reqs[0]), what);
    mpi_check(MPI_Isend(send, static_cast<int>(send_bytes), MPI_BYTE, right, 0, comm_, &reqs[1]), what);
    wait_all(reqs, 2, deadline, what);
  }

  void ring_all_reduce(void* data, ScalarType dtype, int64_t n, ReduceOp op, Clock::time_point deadline) {
    if (size_ > 1) {
      ring_reduce_scatter(data, dtype, n, op, deadline);
      // All-gather: pass the finished blocks around the ring.
      auto* p = static_cast<char*>(data);
      auto es = static_cast<int64_t>(element_size(dtype));
      for (int s = 0; s < size_ - 1; ++s) {
        int64_t send_block = ((rank_ - s) % size_ + size_) % size_;
        int64_t recv_block = ((rank_ - 1 - s) % size_ + size_) % size_;
        int64_t sb = begin(send_block, n), sl = begin(send_block + 1, n) - sb;
        int64_t rb = begin(recv_block, n), rl = begin(recv_block + 1, n) - rb;
        exchange_unequal(p + sb * es, static_cast<size_t>(sl * es), p + rb * es, static_cast<size_t>(rl * es),
                         deadline, "all_reduce");
      }
    }
    if (op == ReduceOp::Avg) divide_by(dtype, data, n, size_);
  }

  std::shared_ptr<MpiEnv> env_;
  double timeout_s_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<MpiWork>> queue_;
  bool stop_ = false;
  uint64_t seq_ = 0;
  // Communication thread only.
  std::string broken_;
  bool timed_out_ = false;
  std::thread thread_;
};

double default_timeout() {
  if (const char* v = std::getenv("EMBER_DIST_TIMEOUT")) {
    char* end = nullptr;
    double s = std::strtod(v, &end);
    EMBER_CHECK(end != v && *end == '\0' && s > 0, "EMBER_DIST_TIMEOUT: expected a positive number of seconds, got '{}'",
                v);
    return s;
  }
  return 300.0;
}

}  // namespace

bool launched_by_mpi() {
  if (has_pmi_environment()) return true;
  // srun without PMI (--mpi=none, or a plugin the MPI library lacks) still
  // started one job of several tasks: join it, so that init_process_group
  // refuses it with a hint instead of each task training alone as a world
  // of one that writes the run directory.
  return srun_step_tasks() > 1;
}

ProcessGroupPtr init_process_group(const std::string& backend, InitOptions options) {
  EMBER_CHECK(backend == "mpi", "init_process_group: unknown backend '{}'; Ember's backend is 'mpi'", backend);
  std::string mode = std::getenv("EMBER_DIST") ? std::getenv("EMBER_DIST") : "";
  EMBER_CHECK(mode.empty() || mode == "off" || mode == "mpi", "EMBER_DIST: expected 'off' or 'mpi', got '{}'", mode);
  if (mode == "off" || (mode.empty() && !launched_by_mpi())) return local_process_group();
  // Read before MPI_Init, which may add variables of its own.
  const int srun_tasks = srun_step_tasks();
  check_srun_has_pmi(srun_tasks);
  double timeout = options.timeout_s > 0 ? options.timeout_s : default_timeout();
  auto group = std::make_shared<ProcessGroupMPI>(timeout);
  check_srun_world(srun_tasks, group->size());
  return group;
}

}  // namespace ember::distributed
