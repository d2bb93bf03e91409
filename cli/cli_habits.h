// What users of nsys, git and pip expect from a command line, kept out of main():
// `qprof help [COMMAND]`, "did you mean ...?" for a mistyped subcommand, and parse errors
// as one line.
#ifndef QPROF_CLI_CLI_HABITS_H_
#define QPROF_CLI_CLI_HABITS_H_

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace qprof::cli {

struct CommandRunner;

// Edit distance (insertions, deletions, substitutions, adjacent transpositions).
int EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a typo (distance at most 2,
// or 1 for words of up to 4 letters; a unique prefix of 3+ letters counts too); "" if none.
std::string Closest(std::string_view word, const std::vector<std::string>& candidates);

// Names of `app`'s visible subcommands, in registration order.
std::vector<std::string> SubcommandNames(const CLI::App& app);

// `qprof help` (the overview) and `qprof help COMMAND` (that command's --help).
void RegisterHelpCommand(CLI::App& app, CommandRunner& runner);

// When argv's first word (before any option) is not a subcommand: the one-line error
// ("unknown command 'analize'; did you mean analyze?"), else "".
std::string UnknownCommandError(const CLI::App& app, int argc, char** argv);

// `qprof record CMD ARGS...` as `nsys profile` takes it: qprof's options come first, and the
// first word that is neither one of `sub`'s options nor an option's value starts the
// command. Returns `args` (a whole argv; args[first] is the first word after the subcommand)
// with "--" inserted there, so the command's own options never reach CLI11; unchanged when
// the user wrote "--" already or there is no command.
std::vector<std::string> InsertCommandSeparator(const CLI::App& sub, std::vector<std::string> args,
                                                size_t first);

}  // namespace qprof::cli

#endif  // QPROF_CLI_CLI_HABITS_H_
