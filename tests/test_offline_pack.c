/* The offline archive (scripts/pack_offline.sh) runs the course on a machine that has none
 * of its libraries: tests/scenarios/offline_pack.sh packs, unpacks and runs lesson 00, a
 * 2-rank lesson, and the cluster's ip and tc, with this machine's MPI, OpenBLAS, Criterion
 * and iproute2 masked. */
#include <criterion/criterion.h>
#include <string.h>

#include "shell.h"

Test(offline_pack, unpacked_copy_runs_with_the_system_mpi_hidden, .timeout = 300)
{
    static char output[1 << 16];
    int status = shell_output("tests/scenarios/offline_pack.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "is there already: choose another --out"), "%s", output);
    cr_expect_not_null(strstr(output, "parameters identical on all 1 rank(s)"), "%s", output);
    cr_expect_not_null(strstr(output, "parameters identical on all 2 rank(s)"), "%s", output);
    cr_expect_not_null(strstr(output, "ip utility, iproute2"), "%s", output);
    cr_expect_not_null(strstr(output, "tc utility, iproute2"), "%s", output);
}
