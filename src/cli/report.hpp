#pragma once
// `cudal2 report --csv FILE... [--db STORE...] --out DIR`: the HTML report with the paper's figures.
// The generator is Python (python/cudal2/report.py, matplotlib); this finds it and the project's
// interpreter and runs it with the same arguments.
namespace cudal2 {
// argv[0] is "report". Returns the process exit code (the generator's, or 2 if it cannot be started).
int report_main(int argc, char** argv);
}  // namespace cudal2
