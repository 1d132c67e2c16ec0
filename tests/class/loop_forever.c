
/* A submission that never ends: the run's time limit ends it. */
__attribute__((constructor)) static void loop_forever(void)
{
    for (volatile unsigned long i = 0;; i++)
        ;
}
