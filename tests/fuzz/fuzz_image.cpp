// read_image (stb_image: PNG/JPEG/BMP/GIF/TGA) on an untrusted file, as
// ImageFolder decodes it (3 channels), then the bilinear resize the
// transforms apply.
#include "ember/data/datasets/image_folder.h"
#include "ember/ember.h"
#include "fuzz_util.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::InputFile file(".img");
  const std::string& path = file.write(data, size);
  fuzz::expect_clean_error([&] {
    Tensor img = data::read_image(path, 3);
    fuzz::require(img.dim() == 3 && img.size(2) == 3, "read_image(path, 3) gives [H, W, 3]");
    (void)data::resize_image(img, 5, 7);
  });
  return 0;
}
