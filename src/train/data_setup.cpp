// data.* options -> data sets (train/val/test) and loaders.
#include "ember/train/data_setup.h"

#include <charconv>
#include <filesystem>

#include "ember/data/data.h"
#include "ember/train/split_file.h"

namespace ember::train {

namespace fs = std::filesystem;
using namespace ember::data;

Schema data_schema() {
  using S = std::vector<std::string>;
  using F = std::vector<double>;
  return Schema{
      {"data.dataset", ValueType::String, std::string("fashion_mnist"), "data set",
       {"fashion_mnist", "mnist", "csv", "image_folder", "text"}},
      {"data.root", ValueType::String, std::string(""), "data set folder (fashion_mnist: Debian's "
       "/usr/share/datasets/fashion-mnist; image_folder: a folder with train/ and test/ class folders)"},
      {"data.train_file", ValueType::String, std::string(""), "training file (csv, text)"},
      {"data.test_file", ValueType::String, std::string(""), "test file (csv, text)"},
      {"data.label_column", ValueType::String, std::string("label"), "label column (csv): a header name, or an "
       "integer index (0 = first, -1 = last)"},
      {"data.image_shape", ValueType::IntList, std::vector<int64_t>{}, "csv: [C, H, W] to reshape each row's "
       "feature (pixel) columns into an image for the CNN models (empty: a flat row)", {}, "[1, inf)"},
      {"data.header", ValueType::String, std::string("auto"), "csv: whether the first line is a header (auto: yes "
       "when the label is named, else when a non-label cell of the first line is not a number); files may be "
       "gzip-compressed (.csv.gz)", {"auto", "true", "false"}},
      {"data.task", ValueType::String, std::string("classification"), "csv: class labels or numeric targets "
       "(regression: MSE loss, MSE/MAE metrics)", {"classification", "regression"}},
      {"data.val_fraction", ValueType::Float, 0.1, "fraction of the training set held out for validation",
       {}, "[0, 1)"},
      {"data.split_file", ValueType::String, std::string(""), "JSON {\"train\": [rows], \"val\": [rows]}: the "
       "training file's rows (from 0, after limit_train) for each split, instead of data.val_fraction"},
      {"data.batch_size", ValueType::Int, int64_t{128}, "training batch size", {}, "[1, inf)"},
      {"data.eval_batch_size", ValueType::Int, int64_t{0}, "batch size of validation and test (0: data.batch_size, "
       "so evaluation reuses the training step's cached buffers)", {}, "[0, inf)"},
      {"data.num_workers", ValueType::Int, int64_t{2}, "loader worker threads (0: load in the training thread)",
       {}, "[0, 256]"},
      {"data.prefetch_factor", ValueType::Int, int64_t{2}, "batches each worker loads ahead", {}, "[1, 1024]"},
      {"data.drop_last", ValueType::Bool, false, "drop the last incomplete training batch"},
      {"data.cache", ValueType::Bool, false, "keep decoded samples in memory after the first epoch"},
      {"data.augment", ValueType::StringList, S{}, "training augmentation, in order",
       {"random_crop", "hflip", "rotation", "erasing"}},
      {"data.crop_padding", ValueType::Int, int64_t{4}, "padding of random_crop", {}, "[0, inf)"},
      {"data.rotation_degrees", ValueType::Float, 10.0, "maximum angle of rotation", {}, "[0, 360]"},
      {"data.erasing_p", ValueType::Float, 0.5, "probability of erasing", {}, "[0, 1]"},
      {"data.normalize", ValueType::Bool, true, "normalise images with mean/std"},
      {"data.mean", ValueType::FloatList, F{}, "per-channel mean (empty: the data set's)"},
      {"data.std", ValueType::FloatList, F{}, "per-channel std (empty: the data set's)", {}, "(0, inf)"},
      {"data.image_size", ValueType::Int, int64_t{32}, "images are resized to this square size (image_folder)",
       {}, "[1, 65536]"},
      {"data.channels", ValueType::Int, int64_t{3}, "image channels (image_folder)", {}, "[1, 4]"},
      {"data.tokenizer", ValueType::String, std::string("whitespace"), "text tokenizer", {"whitespace", "char"}},
      {"data.min_freq", ValueType::Int, int64_t{1}, "minimum token count for the vocabulary (text)", {}, "[1, inf)"},
      {"data.limit_train", ValueType::Int, int64_t{0}, "use only the first N training samples (0: all)",
       {}, "[0, inf)"},
      {"data.limit_test", ValueType::Int, int64_t{0}, "use only the first N test samples (0: all)", {}, "[0, inf)"},
  };
}

namespace {

[[noreturn]] void config_error(const std::string& msg) { throw ConfigError(msg); }

DatasetPtr limit(DatasetPtr ds, int64_t n) {
  if (n <= 0 || n >= ds->size()) return ds;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
  return std::make_shared<Subset>(ds, std::move(idx));
}

void require_file(const std::string& key, const std::string& path) {
  if (path.empty()) config_error(fmt::format("{} is required for data.dataset = the chosen data set", key));
  if (!fs::exists(path)) config_error(fmt::format("{}: file '{}' does not exist", key, path));
}

// More integer class ids than any classifier here is built for: a label
// column of ids such as 90210 is not a class index.
constexpr int64_t kMaxClasses = 100000;

// A file the config names, read into a data set: what is wrong with the file
// is a configuration error (exit 2 before anything trains) that names the
// key, the file, the line and the problem.
template <typename D, typename Options>
std::shared_ptr<D> read_input(const char* key, const std::string& train_file, const std::string& path,
                              const Options& opt) {
  try {
    return std::make_shared<D>(path, opt);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    std::string from = train_file.empty() ? "" : fmt::format(" (labels and classes come from data.train_file '{}')",
                                                             train_file);
    config_error(fmt::format("{}: {}{}", key, e.what(), from));
  }
}

struct Raw {
  DatasetPtr train, test;  // samples (image uint8 [H,W] or [H,W,C] | features | tokens, label)
  DataInfo info;
  bool images = false;
  std::vector<double> mean, std;
  std::shared_ptr<CsvDataset> csv_train, csv_test;  // standardised after the split
};

// Rows of the underlying data set that a (possibly nested) Subset uses.
std::vector<int64_t> base_rows(const DatasetPtr& ds) {
  auto* sub = dynamic_cast<const Subset*>(ds.get());
  if (!sub) {
    std::vector<int64_t> all(static_cast<size_t>(ds->size()));
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    return all;
  }
  std::vector<int64_t> inner = base_rows(sub->dataset()), out;
  for (int64_t i : sub->indices()) out.push_back(inner[static_cast<size_t>(i)]);
  return out;
}

Raw load_mnist(const Config& c, bool fashion) {
  std::string root = c.get_string("data.root");
  if (root.empty()) {
    if (!fashion) config_error("data.root: MNIST has no default location; set data.root to a folder with the "
                               "IDX files (train-images-idx3-ubyte[.gz], ...)");
    root = kDebianFashionMnistRoot;
  }
  bool found = fs::exists(root + "/train-images-idx3-ubyte.gz") || fs::exists(root + "/train-images-idx3-ubyte");
  if (!found)
    config_error(fmt::format("data.root: no {} IDX files in '{}' (expected train-images-idx3-ubyte[.gz]); {}",
                             fashion ? "Fashion-MNIST" : "MNIST", root,
                             fashion ? "install Debian's package with `apt-get install dataset-fashion-mnist` "
                                       "(scripts/setup does) or set data.root"
                                     : "set data.root"));
  Raw r;
  r.train = std::make_shared<MNIST>(root, true);
  r.test = std::make_shared<MNIST>(root, false);
  r.images = true;
  r.info.input_shape = {1, 28, 28};
  r.info.num_classes = 10;
  if (fashion) {
    r.info.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                          "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    r.mean = {0.2860}, r.std = {0.3530};
  } else {
    for (int i = 0; i < 10; ++i) r.info.class_names.push_back(std::to_string(i));
    r.mean = {0.1307}, r.std = {0.3081};
  }
  return r;
}

// data.label_column: an integer is an index (0 = first, -1 = last), else a
// header name; data.header: auto, true or false.
void set_label_column(CsvOptions& opt, const Config& c) {
  const std::string& label = c.get_string("data.label_column");
  int64_t index = 0;
  const char* end = label.data() + label.size();
  auto [p, ec] = std::from_chars(label.data(), end, index);
  if (!label.empty() && ec == std::errc() && p == end) opt.label_index = index;
  else opt.label_column = label;
  const std::string& header = c.get_string("data.header");
  if (header != "auto") opt.header = header == "true";
  if (opt.header == false && !opt.label_index)
    config_error(fmt::format("data.header=false: choose data.label_column by index (0 = first, -1 = last), not by "
                             "name ('{}')", label));
}

Raw load_csv(const Config& c) {
  require_file("data.train_file", c.get_string("data.train_file"));
  require_file("data.test_file", c.get_string("data.test_file"));
  CsvOptions opt;
  set_label_column(opt, c);
  opt.regression = c.get_string("data.task") == "regression";
  const std::string& train_file = c.get_string("data.train_file");
  auto train = read_input<CsvDataset>("data.train_file", "", train_file, opt);
  opt.classes = train->classes();
  if (!opt.regression && opt.classes.empty()) {
    // Integer labels: the test split must use the training split's ids, or
    // a test label the model has no output for fails inside the loss.
    const int64_t max_label = train->labels().max().item<int64_t>();
    if (max_label >= kMaxClasses)
      config_error(fmt::format("data.train_file: '{}' has label {} in column '{}': integer labels are class ids "
                               "0..K-1 (at most {} classes); use names for other labels",
                               train_file, max_label, c.get_string("data.label_column"), kMaxClasses));
    opt.num_classes = max_label + 1;
  }
  auto test = read_input<CsvDataset>("data.test_file", train_file, c.get_string("data.test_file"), opt);
  Raw r;
  r.csv_train = train;
  r.csv_test = test;
  r.train = train;
  r.test = test;
  r.info.input_shape = {train->features().size(1)};
  if (std::vector<int64_t> shape = c.get_int_list("data.image_shape"); !shape.empty()) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    if (n != r.info.input_shape[0])
      config_error(fmt::format("data.image_shape [{}] holds {} values, but '{}' has {} feature columns",
                               fmt::join(shape, ", "), n, train_file, r.info.input_shape[0]));
    train->set_sample_shape(shape);
    test->set_sample_shape(shape);
    r.info.input_shape = shape;
  }
  if (opt.regression) {
    r.info.task = Task::Regression;
    r.info.num_classes = 1;  // one output
    return r;
  }
  int64_t classes = static_cast<int64_t>(train->classes().size());
  if (classes == 0) classes = opt.num_classes;
  r.info.num_classes = classes;
  r.info.class_names = train->classes();
  if (r.info.class_names.empty())
    for (int64_t i = 0; i < classes; ++i) r.info.class_names.push_back(std::to_string(i));
  return r;
}

Raw load_image_folder(const Config& c) {
  std::string root = c.get_string("data.root");
  if (root.empty()) config_error("data.root is required for data.dataset = image_folder (a folder with train/ and "
                                 "test/, each holding one folder per class)");
  for (const char* split : {"train", "test"})
    if (!fs::is_directory(root + "/" + split))
      config_error(fmt::format("data.root: '{}/{}' is not a folder; image_folder needs train/ and test/ with one "
                               "folder per class", root, split));
  ImageFolderOptions opt;
  opt.channels = static_cast<int>(c.get_int("data.channels"));
  int64_t size = c.get_int("data.image_size");
  opt.resize = {size, size};
  auto train = std::make_shared<ImageFolder>(root + "/train", opt);
  auto test = std::make_shared<ImageFolder>(root + "/test", opt);
  if (train->classes() != test->classes())
    config_error(fmt::format("data.root: '{}/train' has classes [{}] but '{}/test' has [{}]", root,
                             fmt::join(train->classes(), ", "), root, fmt::join(test->classes(), ", ")));
  Raw r;
  r.train = train;
  r.test = test;
  r.images = true;
  r.info.input_shape = {opt.channels, size, size};
  r.info.num_classes = static_cast<int64_t>(train->classes().size());
  r.info.class_names = train->classes();
  r.mean.assign(static_cast<size_t>(opt.channels), 0.5);
  r.std.assign(static_cast<size_t>(opt.channels), 0.5);
  return r;
}

Raw load_text(const Config& c) {
  require_file("data.train_file", c.get_string("data.train_file"));
  require_file("data.test_file", c.get_string("data.test_file"));
  TextOptions opt;
  opt.tokenizer = c.get_string("data.tokenizer") == "char" ? Tokenizer::Character : Tokenizer::Whitespace;
  opt.min_freq = c.get_int("data.min_freq");
  const std::string& train_file = c.get_string("data.train_file");
  auto train = read_input<TextDataset>("data.train_file", "", train_file, opt);
  opt.vocab = train->vocab();  // the vocabulary comes from the training split only
  opt.classes = train->classes();
  auto test = read_input<TextDataset>("data.test_file", train_file, c.get_string("data.test_file"), opt);
  Raw r;
  r.train = train;
  r.test = test;
  r.info.num_classes = static_cast<int64_t>(train->classes().size());
  r.info.class_names = train->classes();
  r.info.vocab_size = train->vocab()->size();
  r.info.pad_index = train->vocab()->pad_index();
  return r;
}

// The evaluation pipeline of an image data set as data: the decode and resize
// its data set does, then ToTensor and the Normalize of image_transform.
ImagePreprocess eval_preprocess(const Config& c, const Raw& r) {
  ImagePreprocess p;
  p.channels = static_cast<int>(r.info.input_shape[0]);
  p.height = r.info.input_shape[1];
  p.width = r.info.input_shape[2];
  if (c.get_bool("data.normalize")) {
    p.mean = c.get_float_list("data.mean");
    p.std = c.get_float_list("data.std");
    if (p.mean.empty()) p.mean = r.mean;
    if (p.std.empty()) p.std = r.std;
  }
  return p;
}

// Training adds the configured augmentation around the same steps.
TransformPtr image_transform(const Config& c, const ImagePreprocess& pre, bool train) {
  std::vector<TransformPtr> steps{std::make_shared<transforms::ToTensor>()};
  if (train) {
    int64_t h = pre.height, w = pre.width;
    for (const std::string& a : c.get_string_list("data.augment")) {
      if (a == "random_crop")
        steps.push_back(std::make_shared<transforms::RandomCrop>(std::pair<int64_t, int64_t>{h, w},
                                                                 c.get_int("data.crop_padding")));
      else if (a == "hflip") steps.push_back(std::make_shared<transforms::RandomHorizontalFlip>());
      else if (a == "rotation")
        steps.push_back(std::make_shared<transforms::RandomRotation>(c.get_float("data.rotation_degrees")));
    }
  }
  if (!pre.mean.empty()) steps.push_back(std::make_shared<transforms::Normalize>(pre.mean, pre.std));
  if (train) {
    auto augment = c.get_string_list("data.augment");
    // Erasing works on the normalised tensor, as in torchvision's usual order.
    if (std::find(augment.begin(), augment.end(), "erasing") != augment.end())
      steps.push_back(std::make_shared<transforms::RandomErasing>(c.get_float("data.erasing_p")));
  }
  return std::make_shared<transforms::Compose>(std::move(steps));
}

}  // namespace

DataBundle build_data(const Config& c) {
  const std::string& name = c.get_string("data.dataset");
  Raw r = name == "fashion_mnist" ? load_mnist(c, true)
          : name == "mnist"       ? load_mnist(c, false)
          : name == "csv"         ? load_csv(c)
          : name == "image_folder" ? load_image_folder(c)
                                   : load_text(c);
  const auto seed = static_cast<uint64_t>(c.get_int("train.seed"));
  if (c.get_bool("data.cache") && !r.csv_train) {
    r.train = std::make_shared<CachedDataset>(r.train);
    r.test = std::make_shared<CachedDataset>(r.test);
  }
  DatasetPtr train = limit(r.train, c.get_int("data.limit_train"));
  DatasetPtr test = limit(r.test, c.get_int("data.limit_test"));

  double frac = c.get_float("data.val_fraction");
  if (frac < 0 || frac >= 1) config_error(fmt::format("data.val_fraction must be in [0, 1), got {}", frac));
  DatasetPtr val;
  if (const std::string& split_file = c.get_string("data.split_file"); !split_file.empty()) {
    if (c.is_set("data.val_fraction"))
      config_error(fmt::format("data.split_file ('{}') and data.val_fraction ({}) are both set; the split file "
                               "chooses the validation rows, so remove data.val_fraction (on the command line: "
                               "~data.val_fraction)", split_file, frac));
    SplitIndices split = read_split_file(split_file, train->size());
    if (!split.val.empty()) val = std::make_shared<Subset>(train, std::move(split.val));
    train = std::make_shared<Subset>(train, std::move(split.train));
  } else if (frac > 0) {
    int64_t n_val = static_cast<int64_t>(static_cast<double>(train->size()) * frac);
    if (n_val <= 0 || n_val >= train->size())
      config_error(fmt::format("data.val_fraction = {} leaves no samples for {} of {}; raise it, or set 0 for no "
                               "validation split", frac, n_val <= 0 ? "validation" : "training", train->size()));
    auto parts = random_split(train, std::vector<int64_t>{train->size() - n_val, n_val}, seed);
    train = parts[0];
    val = parts[1];
  }
  if (r.csv_train) {
    // Standardise with statistics of the training rows only (not validation).
    Standardizer st = r.csv_train->fit_standardizer(base_rows(train));
    r.csv_train->standardize(st);
    r.csv_test->standardize(st);
    r.info.feature_standardizer = st;
  }
  if (r.images) {
    r.info.image_preprocess = eval_preprocess(c, r);
    // Augmentation is seeded per (seed, epoch, index): the same for any workers.
    train = std::make_shared<TransformedDataset>(train, image_transform(c, *r.info.image_preprocess, true), seed);
    TransformPtr eval_t = image_transform(c, *r.info.image_preprocess, false);
    if (val) val = std::make_shared<TransformedDataset>(val, eval_t, seed);
    test = std::make_shared<TransformedDataset>(test, eval_t, seed);
  }
  return DataBundle{r.info, train, val, test};
}

std::unique_ptr<DataLoader> make_loader(const Config& c, const DatasetPtr& dataset, bool train, int64_t rank,
                                        int64_t world) {
  DataLoaderOptions opt;
  opt.batch_size = c.get_int(train ? "data.batch_size" : "data.eval_batch_size");
  if (!train && opt.batch_size == 0) opt.batch_size = c.get_int("data.batch_size");
  EMBER_CHECK(opt.batch_size > 0, "data.{} must be positive, got {}", train ? "batch_size" : "eval_batch_size",
              opt.batch_size);
  opt.shuffle = train;
  opt.drop_last = train && c.get_bool("data.drop_last");
  opt.num_workers = static_cast<int>(c.get_int("data.num_workers"));
  opt.prefetch_factor = static_cast<int>(c.get_int("data.prefetch_factor"));
  opt.seed = static_cast<uint64_t>(c.get_int("train.seed"));
  if (train && world > 1) {
    opt.shuffle = false;  // the sampler shuffles, from the same seed on every rank
    opt.sampler = std::make_shared<DistributedSampler>(dataset->size(), world, rank, true, *opt.seed,
                                                       c.get_bool("dist.drop_last"));
  }
  if (c.get_string("data.dataset") == "text") {
    // (tokens, lengths, labels) -> ((tokens, lengths), labels): input, target.
    CollateFn pad = pad_collate(0);
    opt.collate_fn = [pad](std::vector<Sample> samples) {
      Sample b = pad(std::move(samples));
      return Sample::tuple({Sample::tuple({b[0], b[1]}), b[2]});
    };
  }
  return std::make_unique<DataLoader>(dataset, std::move(opt));
}

}  // namespace ember::train
