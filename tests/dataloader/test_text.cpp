// Text data: tokenizers, vocabulary from the train split, TextDataset, padding collate.
#include "data_test_util.h"
#include "ember/data/data.h"

using namespace ember;
using namespace ember::data;
using ember::testing::expect_error;
using ember::testing::expect_values;
using ember::testing::TempDir;
using ember::testing::write_text;

TEST(DataText, Tokenizers) {
  EXPECT_EQ(tokenize("  a bb\tc\n", Tokenizer::Whitespace), (std::vector<std::string>{"a", "bb", "c"}));
  EXPECT_EQ(tokenize("ab é", Tokenizer::Character), (std::vector<std::string>{"a", "b", " ", "é"}));
}

TEST(DataText, VocabMinFreqAndSpecials) {
  Vocab v = Vocab::build({{"b", "a", "b", "c"}, {"a", "b", "d"}}, 2);
  // Specials first, then by count (b: 3, a: 2); c and d are below min_freq.
  EXPECT_EQ(v.size(), 4);
  EXPECT_EQ(v.token(0), "<pad>");
  EXPECT_EQ(v.token(1), "<unk>");
  EXPECT_EQ(v.token(2), "b");
  EXPECT_EQ(v.token(3), "a");
  EXPECT_EQ(v.encode({"a", "c", "b"}), (std::vector<int64_t>{3, 1, 2}));
}

TEST(DataText, DatasetAndPaddedBatches) {
  TempDir dir;
  write_text(dir.file("train.txt"), "pos\tGood movie good\nneg\tbad movie\n\nneg\tvery bad\n");
  write_text(dir.file("test.txt"), "pos\tgood unseen\n");
  TextDataset train(dir.file("train.txt"));
  EXPECT_EQ(train.size(), 3);
  EXPECT_EQ(train.classes(), (std::vector<std::string>{"neg", "pos"}));
  // Counts: bad 2, good 2, movie 2, very 1 -> ids 2.. in (count desc, token) order.
  const Vocab& v = *train.vocab();
  EXPECT_EQ(v["bad"], 2);
  EXPECT_EQ(v["good"], 3);
  EXPECT_EQ(v["movie"], 4);
  EXPECT_EQ(v["very"], 5);
  TextOptions test_opts;
  test_opts.vocab = train.vocab();
  test_opts.classes = train.classes();
  TextDataset test(dir.file("test.txt"), test_opts);
  expect_values(test.get(0)[0].tensor(), {2}, {3, 1});  // "unseen" -> <unk>
  DataLoader loader(std::make_shared<TextDataset>(dir.file("train.txt")),
                    DataLoaderOptions().with_batch_size(3).with_collate_fn(pad_collate(v.pad_index())));
  int n = 0;
  for (auto& b : loader) {
    expect_values(b[0].tensor(), {3, 3}, {3, 4, 3, 2, 4, 0, 5, 2, 0});
    expect_values(b[1].tensor(), {3}, {3, 2, 2});
    expect_values(b[2].tensor(), {3}, {1, 0, 0});
    ++n;
  }
  EXPECT_EQ(n, 1);
  // Character level.
  TextOptions chars;
  chars.tokenizer = Tokenizer::Character;
  TextDataset c(dir.file("test.txt"), chars);
  EXPECT_EQ(c.get(0)[0].tensor().numel(), 11);
}

TEST(DataText, BadLinesNameFileAndLine) {
  TempDir dir;
  write_text(dir.file("nosep.txt"), "pos\tfine\nno separator here\n");
  expect_error([&] { TextDataset(dir.file("nosep.txt")); }, {"nosep.txt", "line 2", "no separator"});
  write_text(dir.file("nolabel.txt"), "\tjust text\n");
  expect_error([&] { TextDataset(dir.file("nolabel.txt")); }, {"nolabel.txt", "line 1", "label is empty"});
  write_text(dir.file("unknown.txt"), "pos\tok\nmaybe\tok\n");
  TextOptions o;
  o.classes = {"neg", "pos"};
  expect_error([&] { TextDataset(dir.file("unknown.txt"), o); },
               {"unknown.txt", "line 2", "label 'maybe' is out of range"});
  expect_error([&] { TextDataset(dir.file("absent.txt")); }, {"absent.txt", "no such file"});
}

TEST(DataText, EmptyTextIsRefusedByLine) {
  // "neg<TAB>" has no tokens: a length-0 sequence used to fail later, inside
  // LSTMClassifier ("expected lengths in [1, 2] ... got 0").
  TempDir dir;
  write_text(dir.file("empty.txt"), "pos\tgood fun\nneg\t\n");
  expect_error([&] { TextDataset(dir.file("empty.txt")); },
               {"empty.txt", "line 2", "text after the label 'neg' is empty"});
  write_text(dir.file("spaces.txt"), "pos\tgood\nneg\t   \n");
  expect_error([&] { TextDataset(dir.file("spaces.txt")); }, {"spaces.txt", "line 2", "is empty"});
  // Spaces are tokens at character level.
  TextOptions chars;
  chars.tokenizer = Tokenizer::Character;
  TextDataset c(dir.file("spaces.txt"), chars);
  EXPECT_EQ(c.get(1)[0].tensor().numel(), 3);
}
