#include "ember/io/pytorch.h"

#include <bit>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

#include "ember/io/atomic_file.h"
#include "ember/ops/factory.h"
#include "zip.h"

namespace ember::io {

static_assert(std::endian::native == std::endian::little, "pytorch loading assumes a little-endian host");

// ---- PyValue ----

const char* kind_name(PyValue::Kind k) {
  static constexpr const char* kNames[] = {"None", "bool", "int",   "float", "str",
                                           "bytes", "list", "tuple", "dict",  "tensor"};
  return kNames[static_cast<int>(k)];
}

PyValue PyValue::from_bool(bool b) { PyValue v; v.kind_ = Kind::Bool; v.i_ = b; return v; }
PyValue PyValue::from_int(int64_t i) { PyValue v; v.kind_ = Kind::Int; v.i_ = i; return v; }
PyValue PyValue::from_float(double f) { PyValue v; v.kind_ = Kind::Float; v.f_ = f; return v; }
PyValue PyValue::from_string(std::string s, bool bytes) {
  PyValue v; v.kind_ = bytes ? Kind::Bytes : Kind::String; v.s_ = std::move(s); return v;
}
PyValue PyValue::from_tensor(Tensor t) { PyValue v; v.kind_ = Kind::Tensor; v.t_ = std::move(t); return v; }
PyValue PyValue::list(std::vector<PyValue> items, bool tuple) {
  PyValue v; v.kind_ = tuple ? Kind::Tuple : Kind::List; v.a_ = std::move(items); return v;
}
PyValue PyValue::dict(std::vector<PyValue> keys, std::vector<PyValue> values) {
  EMBER_CHECK(keys.size() == values.size(), "PyValue::dict: {} keys but {} values", keys.size(), values.size());
  PyValue v; v.kind_ = Kind::Dict; v.a_ = std::move(keys); v.b_ = std::move(values); return v;
}

#define EMBER_PYV_EXPECT(cond, want) \
  EMBER_CHECK(cond, "PyValue: expected {}, but the value is {}", want, kind_name(kind_))

bool PyValue::to_bool() const { EMBER_PYV_EXPECT(kind_ == Kind::Bool, "bool"); return i_ != 0; }
int64_t PyValue::to_int() const { EMBER_PYV_EXPECT(kind_ == Kind::Int || kind_ == Kind::Bool, "int"); return i_; }
double PyValue::to_double() const {
  EMBER_PYV_EXPECT(kind_ == Kind::Float || kind_ == Kind::Int, "float");
  return kind_ == Kind::Float ? f_ : static_cast<double>(i_);
}
const std::string& PyValue::to_string() const {
  EMBER_PYV_EXPECT(kind_ == Kind::String || kind_ == Kind::Bytes, "str");
  return s_;
}
const Tensor& PyValue::to_tensor() const { EMBER_PYV_EXPECT(kind_ == Kind::Tensor, "tensor"); return t_; }
const std::vector<PyValue>& PyValue::items() const {
  EMBER_PYV_EXPECT(kind_ == Kind::List || kind_ == Kind::Tuple, "list or tuple");
  return a_;
}
const std::vector<PyValue>& PyValue::keys() const { EMBER_PYV_EXPECT(kind_ == Kind::Dict, "dict"); return a_; }
const std::vector<PyValue>& PyValue::values() const { EMBER_PYV_EXPECT(kind_ == Kind::Dict, "dict"); return b_; }
const PyValue* PyValue::find(std::string_view key) const {
  EMBER_PYV_EXPECT(kind_ == Kind::Dict, "dict");
  for (size_t k = 0; k < a_.size(); ++k)
    if (a_[k].kind_ == Kind::String && a_[k].s_ == key) return &b_[k];
  return nullptr;
}
const PyValue& PyValue::at(std::string_view key) const {
  const PyValue* v = find(key);
  EMBER_CHECK(v != nullptr, "PyValue: dict has no key '{}'", key);
  return *v;
}

// ---- the data-only unpickler ----

namespace {

#define EMBER_PT_CHECK(cond, ...) \
  EMBER_CHECK(cond, "pytorch: cannot load '{}': {}", source_, fmt::format(__VA_ARGS__))

struct Obj;
using Ref = std::shared_ptr<Obj>;
struct Obj {
  enum K { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Tensor, Global, Storage } k = None;
  int64_t i = 0;
  double f = 0;
  std::string s;            // str/bytes; "module.name" for Global; key for Storage
  std::vector<Ref> a, b;    // list/tuple items or dict keys; dict values
  ember::Tensor t;          // Tensor; the 1-d base of a Storage
};

struct StorageType {
  const char* name;
  ScalarType type;
};
constexpr StorageType kStorages[] = {
    {"FloatStorage", kFloat32}, {"DoubleStorage", kFloat64}, {"HalfStorage", kFloat16},
    {"BFloat16Storage", kBFloat16}, {"LongStorage", kInt64}, {"IntStorage", kInt32},
    {"ShortStorage", kInt16}, {"CharStorage", kInt8}, {"ByteStorage", kUInt8}, {"BoolStorage", kBool}};

class Unpickler {
 public:
  Unpickler(std::string_view pkl, std::string_view archive, const std::vector<zip::Member>& members,
            std::string prefix, const std::string& source, const PytorchOptions& opt)
      : p_(pkl), archive_(archive), members_(members), prefix_(std::move(prefix)), source_(source), opt_(opt) {}
  // The legacy format: the whole file is a sequence of pickles followed by
  // the storages' bytes (see run_legacy).
  Unpickler(std::string_view file, const std::string& source, const PytorchOptions& opt)
      : p_(file), archive_(file), members_(kNoMembers), source_(source), opt_(opt), legacy_(true),
        legacy_budget_(file.size()) {}
  ~Unpickler() {
    // Break every reference between containers first: a malicious pickle can
    // build cycles (leaks) or million-deep chains (recursive destruction).
    for (const Ref& r : arena_) {
      r->a.clear();
      r->b.clear();
    }
  }

  PyValue run() {
    Ref result = loop();
    return convert(*result, 0);
  }

 private:
  std::string_view p_, archive_;
  const std::vector<zip::Member>& members_;
  std::string prefix_;
  const std::string& source_;
  PytorchOptions opt_;
  size_t pos_ = 0;
  std::vector<Ref> stack_, arena_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Ref> memo_;
  std::map<std::string, Ref> storages_;  // a Storage's i: 1 once its bytes are in
  bool legacy_ = false;
  uint64_t legacy_budget_ = 0;  // bytes the file can still hold for storages
  static inline const std::vector<zip::Member> kNoMembers;

  const char* pickle_name() const { return legacy_ ? "the pickle" : "data.pkl"; }

  Ref make(Obj::K k) {
    auto r = std::make_shared<Obj>();
    r->k = k;
    if (k == Obj::List || k == Obj::Tuple || k == Obj::Dict) arena_.push_back(r);
    return r;
  }
  std::string_view take(uint64_t n, const char* what) {
    EMBER_PT_CHECK(n <= p_.size() - pos_, "{} truncated: {} needs {} bytes at offset {}, {} left", pickle_name(),
                   what, n, pos_, p_.size() - pos_);
    std::string_view v = p_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  uint64_t uint(int n, const char* what) {
    std::string_view b = take(n, what);
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(b[k]);
    return v;
  }
  std::string line(const char* what) {
    const size_t e = p_.find('\n', pos_);
    EMBER_PT_CHECK(e != std::string_view::npos && e - pos_ <= 256, "{}: unterminated or overlong line", what);
    std::string s(p_.substr(pos_, e - pos_));
    pos_ = e + 1;
    return s;
  }
  void push(Ref r) {
    EMBER_PT_CHECK(stack_.size() < opt_.max_memo, "pickle stack exceeds {} entries", opt_.max_memo);
    stack_.push_back(std::move(r));
  }
  Ref pop(const char* op) {
    EMBER_PT_CHECK(stack_.size() > (marks_.empty() ? 0 : marks_.back()), "{} on an empty stack at offset {}", op,
                   pos_);
    Ref r = std::move(stack_.back());
    stack_.pop_back();
    return r;
  }
  Ref& top(const char* op) {
    EMBER_PT_CHECK(!stack_.empty() && stack_.size() > (marks_.empty() ? 0 : marks_.back()),
                   "{} on an empty stack at offset {}", op, pos_);
    return stack_.back();
  }
  std::vector<Ref> pop_mark(const char* op) {
    EMBER_PT_CHECK(!marks_.empty(), "{} without a MARK at offset {}", op, pos_);
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Ref> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                           std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }
  void memo_put(uint64_t idx) {
    EMBER_PT_CHECK(!stack_.empty(), "memo put on an empty stack");
    EMBER_PT_CHECK(memo_.size() < opt_.max_memo || memo_.count(idx), "memo exceeds {} entries", opt_.max_memo);
    memo_[idx] = stack_.back();
  }
  void memo_get(uint64_t idx) {
    auto it = memo_.find(idx);
    EMBER_PT_CHECK(it != memo_.end(), "memo index {} is not defined (offset {})", idx, pos_);
    push(it->second);
  }
  Ref tuple(std::vector<Ref> items) {
    Ref r = make(Obj::Tuple);
    r->a = std::move(items);
    return r;
  }
  Ref str(std::string_view s, Obj::K k) {
    Ref r = make(k);
    r->s.assign(s);
    return r;
  }

  Ref global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    bool ok = full == "collections.OrderedDict" || full == "torch._utils._rebuild_tensor_v2" ||
              full == "torch._utils._rebuild_parameter";
    if (module == "torch")
      for (const StorageType& s : kStorages) ok |= name == s.name;
    EMBER_PT_CHECK(ok, "global '{}' is not allowed (data-only unpickler: only collections.OrderedDict, "
                   "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and torch.*Storage types; "
                   "nothing is imported or called)", full);
    Ref r = make(Obj::Global);
    r->s = full;
    return r;
  }

  static int64_t as_int(const Obj& o, bool& ok) {
    ok = o.k == Obj::Int || o.k == Obj::Bool;
    return o.i;
  }

  Ref persistent_load(const Ref& pid) {
    // The legacy format adds view_metadata, None since PyTorch 0.4 (storage
    // views are not read).
    const size_t arity = legacy_ ? 6 : 5;
    EMBER_PT_CHECK(pid->k == Obj::Tuple && pid->a.size() == arity && pid->a[0]->k == Obj::Str &&
                       pid->a[0]->s == "storage" && pid->a[1]->k == Obj::Global && pid->a[2]->k == Obj::Str &&
                       pid->a[4]->k == Obj::Int && (!legacy_ || pid->a[5]->k == Obj::None),
                   "persistent id is not ('storage', torch.*Storage, key, location, numel{})",
                   legacy_ ? ", None" : "");
    const std::string& type_name = pid->a[1]->s;
    ScalarType dtype = kFloat32;
    bool found = false;
    for (const StorageType& s : kStorages)
      if (type_name == std::string("torch.") + s.name) dtype = s.type, found = true;
    EMBER_PT_CHECK(found, "persistent id names '{}', not a storage type", type_name);
    const std::string& key = pid->a[2]->s;
    const int64_t numel = pid->a[4]->i;
    EMBER_PT_CHECK(numel >= 0, "storage '{}' has negative size {}", key, numel);
    auto it = storages_.find(key);
    if (it != storages_.end()) {
      EMBER_PT_CHECK(it->second->t.dtype() == dtype && it->second->t.numel() == numel,
                     "storage '{}' is referenced as {} [{}] and as {} [{}]", key, to_string(it->second->t.dtype()),
                     it->second->t.numel(), to_string(dtype), numel);
      return it->second;
    }
    if (legacy_) return legacy_storage(key, dtype, numel);
    const std::string member = prefix_ + "data/" + key;
    const zip::Member* m = nullptr;
    for (const zip::Member& c : members_)
      if (c.name == member) m = &c;
    EMBER_PT_CHECK(m != nullptr, "storage '{}' has no archive member '{}'", key, member);
    uint64_t nbytes = 0;
    EMBER_PT_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(dtype), &nbytes) &&
                       nbytes == m->size,
                   "storage '{}' claims {} {} elements but member '{}' has {} bytes", key, numel, to_string(dtype),
                   member, m->size);
    const std::string bytes = zip::extract(archive_, *m, source_);
    Ref r = make(Obj::Storage);
    r->s = key;
    r->t = empty({numel}, dtype);
    if (nbytes) std::memcpy(r->t.data_ptr(), bytes.data(), nbytes);
    if (dtype == kBool) {
      const auto* b = static_cast<const uint8_t*>(r->t.data_ptr());
      for (int64_t k = 0; k < numel; ++k) EMBER_PT_CHECK(b[k] <= 1, "bool storage '{}' has byte {}", key, b[k]);
    }
    r->i = 1;
    storages_[key] = r;
    return r;
  }

  // A legacy storage: its bytes come after the pickles (run_legacy fills
  // it); until then its size is only bounded by what the file can hold.
  Ref legacy_storage(const std::string& key, ScalarType dtype, int64_t numel) {
    uint64_t nbytes = 0;
    EMBER_PT_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(dtype), &nbytes) &&
                       nbytes <= legacy_budget_,
                   "storage '{}' claims {} {} elements, more than the file's {} bytes can hold", key, numel,
                   to_string(dtype), p_.size());
    legacy_budget_ -= nbytes;
    Ref r = make(Obj::Storage);
    r->s = key;
    r->t = empty({numel}, dtype);
    storages_[key] = r;
    return r;
  }

  // One pickle of a sequence: each has its own memo and stack.
  Ref next_pickle() {
    memo_.clear();
    stack_.clear();
    marks_.clear();
    return loop();
  }

 public:
  // torch.save's format before 1.6 (_use_new_zipfile_serialization=False):
  // pickles of the magic number, the protocol version (1001), sys_info and
  // the object (storages as persistent ids), a pickled list of storage keys,
  // then per key its element count (int64, little-endian) and its bytes.
  PyValue run_legacy() {
    static constexpr std::string_view kMagic("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e", 15);
    EMBER_PT_CHECK(p_.substr(0, kMagic.size()) == kMagic,
                   "no legacy torch.save magic number at the start (neither a zip archive nor a legacy file)");
    pos_ = kMagic.size();
    Ref version = next_pickle();
    EMBER_PT_CHECK(version->k == Obj::Int && version->i == 1001, "legacy format: protocol version is not 1001");
    Ref info = next_pickle();
    EMBER_PT_CHECK(info->k == Obj::Dict, "legacy format: sys_info is not a dict");
    for (size_t j = 0; j < info->a.size(); ++j)
      if (info->a[j]->k == Obj::Str && info->a[j]->s == "little_endian")
        EMBER_PT_CHECK(info->b[j]->k == Obj::Bool && info->b[j]->i == 1,
                       "legacy format: written on a big-endian machine (not supported)");
    Ref result = next_pickle();
    Ref keys = next_pickle();
    EMBER_PT_CHECK(keys->k == Obj::List, "legacy format: the storage key list is not a list");
    for (const Ref& k : keys->a) {
      EMBER_PT_CHECK(k->k == Obj::Str, "legacy format: a storage key is not a string");
      auto it = storages_.find(k->s);
      EMBER_PT_CHECK(it != storages_.end(), "legacy format: storage '{}' is listed but no tensor uses it", k->s);
      Obj& st = *it->second;
      EMBER_PT_CHECK(st.i == 0, "legacy format: storage '{}' is listed twice", k->s);
      const uint64_t numel = uint(8, "storage size");
      EMBER_PT_CHECK(numel == static_cast<uint64_t>(st.t.numel()),
                     "legacy format: storage '{}' has {} elements in the pickle but {} in the data", k->s,
                     st.t.numel(), numel);
      const size_t nbytes = static_cast<size_t>(st.t.numel()) * element_size(st.t.dtype());
      std::string_view bytes = take(nbytes, "storage data");
      if (nbytes) std::memcpy(st.t.data_ptr(), bytes.data(), nbytes);
      if (st.t.dtype() == kBool)
        for (char b : bytes) EMBER_PT_CHECK(static_cast<unsigned char>(b) <= 1, "bool storage '{}' has byte {}", k->s,
                                            static_cast<unsigned char>(b));
      st.i = 1;
    }
    for (const auto& [key, st] : storages_) EMBER_PT_CHECK(st->i == 1, "legacy format: storage '{}' has no data", key);
    EMBER_PT_CHECK(pos_ == p_.size(), "legacy format: {} unexpected bytes after the last storage", p_.size() - pos_);
    return convert(*result, 0);
  }

 private:

  std::vector<int64_t> int_tuple(const Ref& o, const char* what) {
    EMBER_PT_CHECK(o->k == Obj::Tuple || o->k == Obj::List, "_rebuild_tensor_v2: {} is not a tuple", what);
    EMBER_PT_CHECK(o->a.size() <= 64, "_rebuild_tensor_v2: {} has {} dims (limit 64)", what, o->a.size());
    std::vector<int64_t> v;
    for (const Ref& e : o->a) {
      EMBER_PT_CHECK(e->k == Obj::Int && e->i >= 0, "_rebuild_tensor_v2: {} has a negative or non-int entry", what);
      v.push_back(e->i);
    }
    return v;
  }

  Ref rebuild_tensor(const std::vector<Ref>& args) {
    EMBER_PT_CHECK(args.size() == 6 || args.size() == 7,
                   "_rebuild_tensor_v2 takes (storage, offset, size, stride, requires_grad, hooks[, metadata]), "
                   "got {} arguments", args.size());
    EMBER_PT_CHECK(args[0]->k == Obj::Storage, "_rebuild_tensor_v2: first argument is not a storage");
    EMBER_PT_CHECK(args[1]->k == Obj::Int && args[1]->i >= 0, "_rebuild_tensor_v2: storage offset is not an int >= 0");
    const Tensor& base = args[0]->t;
    const int64_t offset = args[1]->i;
    const std::vector<int64_t> size = int_tuple(args[2], "size"), stride = int_tuple(args[3], "stride");
    EMBER_PT_CHECK(size.size() == stride.size(), "_rebuild_tensor_v2: size has {} dims but stride {}", size.size(),
                   stride.size());
    const uint64_t n = static_cast<uint64_t>(base.numel());
    bool overflow = false, empty_view = false;
    uint64_t last = static_cast<uint64_t>(offset), numel = 1;
    for (size_t d = 0; d < size.size(); ++d) {
      empty_view |= size[d] == 0;
      uint64_t span = 0;
      overflow |= __builtin_mul_overflow(static_cast<uint64_t>(size[d] > 0 ? size[d] - 1 : 0),
                                         static_cast<uint64_t>(stride[d]), &span);
      overflow |= __builtin_add_overflow(last, span, &last);
      overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(size[d]), &numel);
    }
    EMBER_PT_CHECK(!overflow && numel <= static_cast<uint64_t>(INT64_MAX),
                   "tensor of size ({}) stride ({}) overflows", fmt::join(size, ", "), fmt::join(stride, ", "));
    EMBER_PT_CHECK(empty_view ? static_cast<uint64_t>(offset) <= n : last < n,
                   "tensor of size ({}), stride ({}), offset {} reaches element {} of storage '{}', which has {}",
                   fmt::join(size, ", "), fmt::join(stride, ", "), offset, last, args[0]->s, n);
    Ref r = make(Obj::Tensor);
    r->t = base.as_strided(size, stride, offset);
    return r;
  }

  Ref reduce(const Ref& fn, const Ref& args) {
    EMBER_PT_CHECK(fn->k == Obj::Global, "REDUCE on a {} (only allowed globals can be reduced)",
                   static_cast<int>(fn->k));
    EMBER_PT_CHECK(args->k == Obj::Tuple, "REDUCE arguments for '{}' are not a tuple", fn->s);
    if (fn->s == "collections.OrderedDict") {
      EMBER_PT_CHECK(args->a.empty(), "collections.OrderedDict is only rebuilt from ()");
      return make(Obj::Dict);
    }
    if (fn->s == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(args->a);
    if (fn->s == "torch._utils._rebuild_parameter") {
      EMBER_PT_CHECK(args->a.size() == 3 && args->a[0]->k == Obj::Tensor,
                     "_rebuild_parameter takes (tensor, requires_grad, hooks)");
      return args->a[0];
    }
    EMBER_PT_CHECK(false, "'{}' cannot be called (it is a type, not a rebuild function)", fn->s);
    return nullptr;
  }

  void set_items(Ref& d, std::vector<Ref>& kv, const char* op) {
    EMBER_PT_CHECK(d->k == Obj::Dict, "{} on a non-dict", op);
    EMBER_PT_CHECK(kv.size() % 2 == 0, "{} with an odd number of items", op);
    for (size_t k = 0; k < kv.size(); k += 2) {
      d->a.push_back(kv[k]);
      d->b.push_back(kv[k + 1]);
    }
  }

  Ref loop() {
    for (;;) {
      EMBER_PT_CHECK(pos_ < p_.size(), "{} ends without STOP", pickle_name());
      const size_t at = pos_;
      const unsigned char op = static_cast<unsigned char>(p_[pos_++]);
      switch (op) {
        case 0x80: uint(1, "PROTO"); break;
        case 0x95: uint(8, "FRAME"); break;
        case '.': {
          Ref r = pop("STOP");
          return r;
        }
        case '(':
          EMBER_PT_CHECK(marks_.size() < opt_.max_depth, "more than {} nested MARKs", opt_.max_depth);
          marks_.push_back(stack_.size());
          break;
        case 'N': push(make(Obj::None)); break;
        case 0x88: case 0x89: { Ref r = make(Obj::Bool); r->i = op == 0x88; push(r); break; }
        case 'K': { Ref r = make(Obj::Int); r->i = static_cast<int64_t>(uint(1, "BININT1")); push(r); break; }
        case 'M': { Ref r = make(Obj::Int); r->i = static_cast<int64_t>(uint(2, "BININT2")); push(r); break; }
        case 'J': {
          Ref r = make(Obj::Int);
          r->i = static_cast<int32_t>(static_cast<uint32_t>(uint(4, "BININT")));
          push(r);
          break;
        }
        case 0x8a: {
          const uint64_t n = uint(1, "LONG1");
          EMBER_PT_CHECK(n <= 8, "integer of {} bytes at offset {} is beyond int64", n, at);
          std::string_view b = take(n, "LONG1");
          uint64_t v = 0;
          for (int k = static_cast<int>(n) - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(b[k]);
          if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);
          Ref r = make(Obj::Int);
          r->i = static_cast<int64_t>(v);
          push(r);
          break;
        }
        case 'G': {
          const uint64_t bits = __builtin_bswap64(uint(8, "BINFLOAT"));  // big-endian in the pickle
          Ref r = make(Obj::Float);
          std::memcpy(&r->f, &bits, 8);
          push(r);
          break;
        }
        case 0x8c: { const uint64_t n = uint(1, "SHORT_BINUNICODE"); push(str(take(n, "string"), Obj::Str)); break; }
        case 'X': { const uint64_t n = uint(4, "BINUNICODE"); push(str(take(n, "string"), Obj::Str)); break; }
        case 0x8d: { const uint64_t n = uint(8, "BINUNICODE8"); push(str(take(n, "string"), Obj::Str)); break; }
        case 'U': { const uint64_t n = uint(1, "SHORT_BINSTRING"); push(str(take(n, "string"), Obj::Str)); break; }
        case 'T': { const uint64_t n = uint(4, "BINSTRING"); push(str(take(n, "string"), Obj::Str)); break; }
        case 'C': { const uint64_t n = uint(1, "SHORT_BINBYTES"); push(str(take(n, "bytes"), Obj::Bytes)); break; }
        case 'B': { const uint64_t n = uint(4, "BINBYTES"); push(str(take(n, "bytes"), Obj::Bytes)); break; }
        case 0x8e: { const uint64_t n = uint(8, "BINBYTES8"); push(str(take(n, "bytes"), Obj::Bytes)); break; }
        case '}': push(make(Obj::Dict)); break;
        case ']': push(make(Obj::List)); break;
        case ')': push(make(Obj::Tuple)); break;
        case 't': push(tuple(pop_mark("TUPLE"))); break;
        case 0x85: { Ref a = pop("TUPLE1"); push(tuple({a})); break; }
        case 0x86: { Ref b = pop("TUPLE2"), a = pop("TUPLE2"); push(tuple({a, b})); break; }
        case 0x87: { Ref c = pop("TUPLE3"), b = pop("TUPLE3"), a = pop("TUPLE3"); push(tuple({a, b, c})); break; }
        case 'l': { Ref r = make(Obj::List); r->a = pop_mark("LIST"); push(r); break; }
        case 'd': {
          std::vector<Ref> kv = pop_mark("DICT");
          Ref r = make(Obj::Dict);
          set_items(r, kv, "DICT");
          push(r);
          break;
        }
        case 'q': memo_put(uint(1, "BINPUT")); break;
        case 'r': memo_put(uint(4, "LONG_BINPUT")); break;
        case 0x94: memo_put(memo_.size()); break;
        case 'h': memo_get(uint(1, "BINGET")); break;
        case 'j': memo_get(uint(4, "LONG_BINGET")); break;
        case 'c': {
          const std::string module = line("GLOBAL module");
          const std::string name = line("GLOBAL name");
          push(global(module, name));
          break;
        }
        case 0x93: {
          Ref name = pop("STACK_GLOBAL"), module = pop("STACK_GLOBAL");
          EMBER_PT_CHECK(name->k == Obj::Str && module->k == Obj::Str, "STACK_GLOBAL needs two strings");
          push(global(module->s, name->s));
          break;
        }
        case 's': {
          Ref v = pop("SETITEM"), k = pop("SETITEM");
          std::vector<Ref> kv{k, v};
          set_items(top("SETITEM"), kv, "SETITEM");
          break;
        }
        case 'u': {
          std::vector<Ref> kv = pop_mark("SETITEMS");
          set_items(top("SETITEMS"), kv, "SETITEMS");
          break;
        }
        case 'a': {
          Ref v = pop("APPEND");
          Ref& l = top("APPEND");
          EMBER_PT_CHECK(l->k == Obj::List, "APPEND on a non-list");
          l->a.push_back(v);
          break;
        }
        case 'e': {
          std::vector<Ref> items = pop_mark("APPENDS");
          Ref& l = top("APPENDS");
          EMBER_PT_CHECK(l->k == Obj::List, "APPENDS on a non-list");
          for (Ref& v : items) l->a.push_back(std::move(v));
          break;
        }
        case 'R': {
          Ref args = pop("REDUCE"), fn = pop("REDUCE");
          push(reduce(fn, args));
          break;
        }
        case 'b': {
          Ref state = pop("BUILD");
          Ref& o = top("BUILD");
          // OrderedDict state is its attributes (state_dict's _metadata);
          // a Parameter's is its Python attributes: data is unaffected.
          EMBER_PT_CHECK(o->k == Obj::Dict || o->k == Obj::Tensor, "BUILD on an object that is not a dict or tensor");
          break;
        }
        case 'Q': {
          Ref pid = pop("BINPERSID");
          push(persistent_load(pid));
          break;
        }
        case '0': pop("POP"); break;
        case '2': push(top("DUP")); break;
        case '1': pop_mark("POP_MARK"); break;
        default:
          EMBER_PT_CHECK(false, "pickle opcode 0x{:02x} at offset {} is not supported by the data-only unpickler",
                         op, at);
      }
    }
  }

  PyValue convert(const Obj& o, size_t depth) {
    EMBER_PT_CHECK(depth <= opt_.max_depth, "containers nested deeper than {} (or a cycle)", opt_.max_depth);
    switch (o.k) {
      case Obj::None: return PyValue::none();
      case Obj::Bool: return PyValue::from_bool(o.i != 0);
      case Obj::Int: return PyValue::from_int(o.i);
      case Obj::Float: return PyValue::from_float(o.f);
      case Obj::Str: return PyValue::from_string(o.s);
      case Obj::Bytes: return PyValue::from_string(o.s, true);
      case Obj::Tensor: return PyValue::from_tensor(o.t);
      case Obj::List: case Obj::Tuple: {
        std::vector<PyValue> items;
        for (const Ref& r : o.a) items.push_back(convert(*r, depth + 1));
        return PyValue::list(std::move(items), o.k == Obj::Tuple);
      }
      case Obj::Dict: {
        std::vector<PyValue> k, v;
        for (size_t j = 0; j < o.a.size(); ++j) {
          k.push_back(convert(*o.a[j], depth + 1));
          v.push_back(convert(*o.b[j], depth + 1));
        }
        return PyValue::dict(std::move(k), std::move(v));
      }
      case Obj::Global: EMBER_PT_CHECK(false, "result holds the bare global '{}'", o.s); break;
      case Obj::Storage: EMBER_PT_CHECK(false, "result holds a bare storage '{}' (not a tensor)", o.s); break;
    }
    return {};
  }
};

}  // namespace

PyValue load_pytorch_bytes(const std::string& bytes, const std::string& source, const PytorchOptions& options) {
  if (!bytes.empty() && bytes[0] == '\x80') {
    Unpickler u(bytes, source, options);
    return u.run_legacy();
  }
  const std::vector<zip::Member> members = zip::list(bytes, source);
  const zip::Member* pkl = nullptr;
  for (const zip::Member& m : members) {
    const size_t slash = m.name.find('/');
    if (slash != std::string::npos && m.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      EMBER_CHECK(pkl == nullptr, "pytorch: cannot load '{}': two data.pkl members", source);
      pkl = &m;
    }
  }
  EMBER_CHECK(pkl != nullptr, "pytorch: cannot load '{}': no ARCHIVE/data.pkl member; not a torch.save file", source);
  const std::string prefix = pkl->name.substr(0, pkl->name.size() - std::string("data.pkl").size());
  for (const zip::Member& m : members)
    if (m.name == prefix + "byteorder") {
      const std::string order = zip::extract(bytes, m, source);
      EMBER_CHECK(order == "little", "pytorch: cannot load '{}': byteorder '{}' is not supported (only little)",
                  source, order);
    }
  const std::string data = zip::extract(bytes, *pkl, source);
  Unpickler u(data, bytes, members, prefix, source, options);
  return u.run();
}

PyValue load_pytorch(const std::string& path, const PytorchOptions& options) {
  return load_pytorch_bytes(read_file(path, "pytorch"), path, options);
}

namespace {
bool tensor_dict(const PyValue& v) {
  if (!v.is_dict()) return false;
  for (const PyValue& x : v.values())
    if (x.is_tensor()) return true;
  return false;
}
void flatten(const PyValue& d, const std::string& prefix, std::string_view strip, StateDict& out, int depth) {
  EMBER_CHECK(depth < 64, "pytorch_state_dict: dicts nested deeper than 64");
  for (size_t k = 0; k < d.keys().size(); ++k) {
    if (d.keys()[k].kind() != PyValue::Kind::String) continue;
    std::string key = prefix + d.keys()[k].to_string();
    const PyValue& v = d.values()[k];
    if (v.is_tensor()) {
      if (!strip.empty() && key.compare(0, strip.size(), strip) == 0) key = key.substr(strip.size());
      out.insert(key, v.to_tensor());
    } else if (v.is_dict()) {
      flatten(v, key + ".", strip, out, depth + 1);
    }
  }
}
}  // namespace

StateDict pytorch_state_dict(const PyValue& v, std::string_view strip_prefix) {
  const PyValue* sd = &v;
  if (v.is_dict()) {
    for (const char* k : {"state_dict", "model", "model_state_dict"})
      if (const PyValue* c = v.find(k); c && tensor_dict(*c)) {
        sd = c;
        break;
      }
  }
  EMBER_CHECK(sd->is_dict(), "pytorch_state_dict: the checkpoint is a {}, not a dict", kind_name(sd->kind()));
  StateDict out;
  flatten(*sd, "", strip_prefix, out, 0);
  return out;
}

}  // namespace ember::io
