/* The step-time model (tools/predict.py): known alpha and beta give the model's times, a fit
 * recovers the alpha and beta its rows were made from, known compute and links give the steps
 * worked out by hand, and bad input is refused with one line (the cases are
 * tests/predict_test.py's); scripts/scale_figures.sh carries it to scale from the lessons' own
 * plans, a row per strategy and rank count, and draws it. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "shell.h"

Test(predict, the_link_and_step_models_fit_and_predict)
{
    char output[1 << 14];
    int status = shell_output("python3 tests/predict_test.py", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
}

Test(predict, the_scale_figures_have_every_strategy_at_every_rank_count, .timeout = 120)
{
    char dir[64], command[512], output[1 << 12];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "scale"));
    snprintf(command, sizeof command, "scripts/scale_figures.sh --out %s --svg", dir);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    /* 8 strategies x 8 rank counts (8 .. 1024), and a header, for each shape and bucket size */
    snprintf(command, sizeof command, "cat %s/scale_124m_25.csv %s/scale_1558m_1000.csv | grep -c '^[a-z0-9]*,[0-9]*,'",
             dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_str_eq(output, "128\n");
    snprintf(command, sizeof command, "grep -c '<path' %s/scale_124m.svg %s/scale_1558m.svg", dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "no plot drawn: %s", output);
    shell_remove_dir(dir);
}
