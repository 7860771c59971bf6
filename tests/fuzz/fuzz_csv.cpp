// CsvDataset on an untrusted file whose label column is "label": as
// classification and as regression, then standardisation and every sample.
#include "ember/data/datasets/csv.h"
#include "ember/ember.h"
#include "fuzz_util.h"

using namespace ember;

namespace {
void exercise(const std::string& path, bool regression) {
  data::CsvOptions opt;
  opt.label_column = "label";
  opt.regression = regression;
  data::CsvDataset ds(path, opt);
  ds.standardize(ds.fit_standardizer());
  for (int64_t i = 0; i < ds.size(); ++i) (void)ds.get(i);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file(".csv");
  const std::string& path = file.write(data, size);
  fuzz::expect_clean_error([&] { exercise(path, false); });
  fuzz::expect_clean_error([&] { exercise(path, true); });
  return 0;
}
