#include "cli/cli_habits.h"

#include <algorithm>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "fmt/core.h"

namespace qprof::cli {

int EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus the swap of two neighbours ("anaylze").
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string Closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  for (const std::string& c : candidates) {
    const int d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const int limit = word.size() <= 4 ? 1 : 2;
  if (best_d <= limit) return best;
  // "ana" for analyze: a prefix that names one command.
  std::string prefixed;
  for (const std::string& c : candidates) {
    if (word.size() >= 3 && c.rfind(word, 0) == 0) {
      if (!prefixed.empty()) return "";
      prefixed = c;
    }
  }
  return prefixed;
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_group().empty()) out.push_back(sub->get_name());
  }
  return out;
}

void RegisterHelpCommand(CLI::App& app, CommandRunner& runner) {
  auto topic = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "help", "Show the commands, or one command's options: qprof help analyze");
  cmd->add_option("command", *topic, "The command to explain");
  CLI::App* root = &app;
  cmd->callback([root, topic, &runner] {
    runner.action = [root, topic]() -> absl::Status {
      // App::help() would show the help of the parsed subcommand, `help` itself.
      if (topic->empty()) {
        fmt::print("{}", root->get_formatter()->make_help(root, root->get_name(), CLI::AppFormatMode::Normal));
        return absl::OkStatus();
      }
      const std::vector<std::string> names = SubcommandNames(*root);
      if (std::find(names.begin(), names.end(), *topic) == names.end()) {
        const std::string guess = Closest(*topic, names);
        return absl::InvalidArgumentError(absl::StrCat(
            "help: unknown command '", *topic, "'",
            guess.empty() ? "" : absl::StrCat("; did you mean ", guess, "?"),
            " (commands: ", absl::StrJoin(names, ", "), ")"));
      }
      CLI::App* sub = root->get_subcommand(*topic);
      fmt::print("{}", sub->get_formatter()->make_help(sub, root->get_name() + " " + sub->get_name(),
                                                       CLI::AppFormatMode::Normal));
      return absl::OkStatus();
    };
  });
}

std::string UnknownCommandError(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return "";
  const std::string word = argv[1];
  if (word.empty() || word[0] == '-') return "";
  const std::vector<std::string> names = SubcommandNames(app);
  if (std::find(names.begin(), names.end(), word) != names.end()) return "";
  const std::string guess = Closest(word, names);
  return absl::StrCat("unknown command '", word, "'",
                      guess.empty() ? "" : absl::StrCat("; did you mean ", guess, "?"),
                      " (`qprof help` lists the commands)");
}

namespace {

// An option whose value is optional takes the next word only when its validator accepts it
// (one of a fixed list of values), so a command is never taken for the option's value.
bool OptionalValueAccepted(const CLI::Option* opt, const std::string& word) {
  if (word.empty() || word[0] == '-') return false;
  try {
    CLI::Validator* v = const_cast<CLI::Option*>(opt)->get_validator(0);
    if (v == nullptr) return false;
    std::string value = word;
    return (*v)(value).empty();
  } catch (const CLI::Error&) {
    return false;  // no validator: the word starts the command
  }
}

}  // namespace

std::vector<std::string> InsertCommandSeparator(const CLI::App& sub, std::vector<std::string> args,
                                                size_t first) {
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return args;
    if (a.size() < 2 || a[0] != '-') {
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), "--");
      return args;
    }
    // An option of `sub`: skip its value too when it takes one and has no "=value".
    const bool is_long = a.rfind("--", 0) == 0;
    const std::string name = is_long ? a.substr(2, a.find('=') - 2) : a.substr(1, 1);
    for (const CLI::Option* opt : sub.get_options()) {
      const bool match = is_long ? opt->check_lname(name) : opt->check_sname(name);
      if (!match) continue;
      const bool inline_value = is_long ? a.find('=') != std::string::npos : a.size() > 2;
      if (opt->get_items_expected_min() > 0 && !inline_value) {
        ++i;
      } else if (!inline_value && opt->get_items_expected_max() > 0 && i + 1 < args.size() &&
                 OptionalValueAccepted(opt, args[i + 1])) {
        ++i;  // `--metrics full CMD`: the word is the option's value, not the command
      }
      break;
    }
  }
  return args;
}

}  // namespace qprof::cli
