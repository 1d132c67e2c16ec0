/* The Yelp CSV reader (data/yelp_csv.h) on any bytes: every record it returns renders into
 * the space yelp_render_max promised; an error or the end, never a crash. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../data/yelp_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *in = fmemopen((void *)data, size, "r");
    if (in == NULL)
        return 0;
    YelpReader reader;
    YelpRecord record;
    char err[512];
    yelp_reader_init(&reader, in, "fuzz");
    while (yelp_reader_next(&reader, &record, err, sizeof err) == 1) {
        char *line = malloc(yelp_render_max(&record));
        if (line != NULL && yelp_render(&record, line) > yelp_render_max(&record))
            abort();
        free(line);
    }
    yelp_reader_free(&reader);
    fclose(in);
    return 0;
}
