// Pictures from the command-line tools, drawn by gnuplot (Debian: gnuplot-nox): the tools write the
// data (FILE.dat) and a script (FILE.gp) beside the requested FILE.png and run gnuplot on it when it is installed;
// when it is not, they say how to install it and how to draw the picture later.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace privpost::tools {

/// The data and script paths of a picture: FILE.png -> FILE.dat, FILE.gp (any other name: name.dat, name.gp).
struct plot_files {
  std::string png, data, script;
};

/// Refuses a --plot name that is not a .png file; returns the three paths.
inline plot_files plot_paths(const std::string& png) {
  const std::filesystem::path p(png);
  if (p.extension() != ".png" || p.stem().empty())
    throw std::invalid_argument("--plot '" + png + "': accepted: a file name ending in .png");
  std::filesystem::path base = p;
  base.replace_extension();
  return {png, base.string() + ".dat", base.string() + ".gp"};
}

/// Whether gnuplot is on the PATH.
inline bool gnuplot_available() { return std::system("command -v gnuplot > /dev/null 2>&1") == 0; }

/// Quotes a path for a gnuplot string literal (single quotes; a single quote doubled).
inline std::string gnuplot_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

/// Runs gnuplot on the script (which writes files.png); tells on stderr what happened. std::runtime_error when gnuplot
/// is installed but fails.
inline void draw_plot(const plot_files& files, const char* tool) {
  if (!gnuplot_available()) {
    std::fprintf(stderr,
                 "%s: gnuplot is not installed, so %s was not drawn; its data and script are in %s and %s. Install it "
                 "(Debian: apt-get install gnuplot-nox) and run: gnuplot %s\n",
                 tool, files.png.c_str(), files.data.c_str(), files.script.c_str(), files.script.c_str());
    return;
  }
  const std::string command = "gnuplot '" + files.script + "'";
  if (files.script.find('\'') != std::string::npos)
    throw std::invalid_argument("--plot: a file name with a single quote cannot be passed to gnuplot");
  if (std::system(command.c_str()) != 0) throw std::runtime_error(std::string(tool) + ": gnuplot failed on " + files.script);
  std::fprintf(stderr, "%s: drew %s (gnuplot %s)\n", tool, files.png.c_str(), files.script.c_str());
}

}  // namespace privpost::tools
