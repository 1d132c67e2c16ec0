/* See cuda_runtime.h: the kernels' translation unit sees one emulated runtime header. */
#include "cuda_runtime.h"
