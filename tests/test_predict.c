/* The step-time model's link (tools/predict.py): known alpha and beta give the model's times,
 * a fit recovers the alpha and beta its rows were made from, and bad input is refused with one
 * line; the cases are tests/predict_test.py's. */
#include <criterion/criterion.h>

#include "shell.h"

Test(predict, the_link_model_fits_and_predicts)
{
    char output[1 << 14];
    int status = shell_output("python3 tests/predict_test.py", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
}
