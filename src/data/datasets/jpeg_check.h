// A walk over a JPEG's marker segments before stb_image decodes it.
#pragma once

#include <string>
#include <vector>

namespace ember::data::detail {

// Throws an ember::Error naming `path` when a Huffman table (DHT segment)
// declares more than 256 codes or overruns its segment. Debian's stb_image
// (git20220908) writes past its 257-entry size table for such a table; newer
// stb releases refuse it with "bad DHT header". Other malformations are left
// to the decoder, which reports them.
void check_jpeg_huffman_tables(const std::vector<unsigned char>& bytes, const std::string& path);

}  // namespace ember::data::detail
