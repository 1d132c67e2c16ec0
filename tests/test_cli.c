/* --help and -h win over every other argument, except where one is the value of a flag that
 * takes a value: there cli_wants_help must agree with cli_parse, which takes it as the value. */
#include <criterion/criterion.h>
#include <stddef.h>

#include "cli.h"

typedef struct {
    const char *prompt;
    int steps, quiet;
} Options;

static const Flag flags[] = {
    {"prompt", FLAG_STRING, offsetof(Options, prompt), "text", 0, 0, 'p'},
    {"steps", FLAG_INT, offsetof(Options, steps), "steps", 0, 100, 0},
    {"quiet", FLAG_SWITCH, offsetof(Options, quiet), "say less", 0, 1, 'q'},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static int wants_help(int argc, const char *const *argv)
{
    Options options = {0};
    FlagSet set = {"test", flags, &options};
    return cli_wants_help(argc, (char **)argv, 1, &set, 1);
}

Test(cli, help_wins_unless_it_is_a_flags_value)
{
    static const struct {
        const char *argv[5];
        int help;
    } cases[] = {
        {{"prog", "--help"}, 1},
        {{"prog", "-h"}, 1},
        {{"prog", "--steps", "3", "-h"}, 1},
        {{"prog", "--prompt", "-h"}, 0},        /* the prompt is "-h" */
        {{"prog", "-p", "--help"}, 1},          /* cli_parse: --prompt needs a value */
        {{"prog", "-p", "-h"}, 0},              /* by its letter, the same */
        {{"prog", "--prompt=-h", "-h"}, 1},     /* the value is inline: the next -h asks */
        {{"prog", "--quiet", "-h"}, 1},         /* a switch takes no value */
        {{"prog", "-q", "--help"}, 1},
        {{"prog", "--unknown", "-h"}, 1},       /* not a flag it knows: help wins */
        {{"prog", "--prompt", "x", "--steps"}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int argc = 0;
        while (argc < 5 && cases[i].argv[argc] != NULL)
            argc++;
        cr_expect_eq(wants_help(argc, cases[i].argv), cases[i].help, "case %zu (%s %s %s): expected %d", i,
                     cases[i].argv[1], argc > 2 ? cases[i].argv[2] : "", argc > 3 ? cases[i].argv[3] : "",
                     cases[i].help);
    }
}

/* What cli_parse makes of "--prompt -h": the value, as cli_wants_help assumed. */
Test(cli, parse_takes_a_dash_h_after_a_flag_as_its_value)
{
    Options options = {0};
    FlagSet set = {"test", flags, &options};
    const char *argv[] = {"prog", "--prompt", "-h", "-p", "-q"};
    char err[256] = "";
    cr_assert_eq(cli_parse(3, (char **)argv, 1, &set, 1, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(options.prompt, "-h");
    cr_expect_eq(cli_parse(5, (char **)argv, 1, &set, 1, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(options.prompt, "-q", "-p takes the next argument, -q, as cli_wants_help assumes");
}
