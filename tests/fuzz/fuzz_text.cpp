// TextDataset on an untrusted "label<TAB>text" file, with both tokenizers;
// a second split read with the first one's vocabulary and classes.
#include "ember/data/datasets/text.h"
#include "ember/ember.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file(".tsv");
  const std::string& path = file.write(data, size);
  for (auto tok : {data::Tokenizer::Whitespace, data::Tokenizer::Character}) {
    fuzz::expect_clean_error([&] {
      data::TextOptions opt;
      opt.tokenizer = tok;
      data::TextDataset train(path, opt);
      for (int64_t i = 0; i < train.size(); ++i) (void)train.get(i);
      data::TextOptions again = opt;
      again.vocab = train.vocab();
      again.classes = train.classes();
      data::TextDataset test(path, again);
      fuzz::require(test.size() == train.size(), "the same file read as a test split has the same samples");
    });
  }
  return 0;
}
