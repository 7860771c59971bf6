// serve::Board: `ember board [ROOT]`, a local web page over the run
// directories under ROOT (curves, hyper-parameters, confusion matrix) that
// updates while runs train. Lives in ember_serve beside `ember serve`
// (cpp-httplib); this header includes none of it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace ember::serve {

struct BoardOptions {
  std::string root = "runs";       // the trainer's log.root
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 6006;                 // 0: any free port (see Board::bind)
  // The most bytes of a CSV file one answer carries; the page asks again,
  // from where the answer ended, for the rest (see Note [board increments]).
  size_t chunk_bytes = size_t{4} << 20;
};

class Board {
 public:
  explicit Board(BoardOptions options);
  ~Board();
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;

  // Binds host:port and returns the port (the chosen one for port 0).
  int bind();
  // Answers requests until stop().
  void serve();
  // Stops accepting; safe from any thread, before or during serve().
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A CSV file of numbers as {"columns": [...], "rows": [[...], ...]}: only
// complete lines (ending in a newline) with as many cells as the header, so
// a file being appended to reads as its rows so far. Cells that are not
// numbers become null.
std::string board_csv_json(const std::string& text);

// The board's HTML page (board_page.cpp): self-contained, no network.
const char* board_page();

}  // namespace ember::serve
