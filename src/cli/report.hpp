#pragma once
// `cudal2 report --csv FILE... [--db STORE...] --out DIR`: the HTML report with the paper's figures.
// The generator is Python (python/cudal2/report.py, matplotlib); this finds it and the project's
// interpreter and runs it with the same arguments, with three guards around it: each --db must be
// an intact store (checked here, so a damaged one is refused naming the file), the report is
// written to a temporary directory beside --out and moved into place only when complete (a full
// disk leaves the old report as it was), and what the user sees of a failure is one error line,
// never a Python traceback.
namespace cudal2 {
// argv[0] is "report". Returns the exit code: the generator's, 2 for bad input or when the
// generator failed with an uncaught exception, 1 when it could not be run to the end.
int report_main(int argc, char** argv);
}  // namespace cudal2
