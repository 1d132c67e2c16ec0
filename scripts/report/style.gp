# Shared look of the course report's plots: SVG, white, readable labels, CSV input.
# Each plot script is run as: gnuplot -e "data='...'; out='...'" scripts/report/NAME.gp
set terminal svg size 760,420 font "sans,12" background "#ffffff" noenhanced
set output out
set datafile separator ","
set datafile columnheaders
set grid lc rgb "#dddddd"
set key outside right top box opaque
set border lc rgb "#444444"
set linetype 1 lc rgb "#4878d0" lw 2
set linetype 2 lc rgb "#ee854a" lw 2
set linetype 3 lc rgb "#6acc64" lw 2
set linetype 4 lc rgb "#d65f5f" lw 2
set linetype 5 lc rgb "#956cb4" lw 2
set linetype 6 lc rgb "#8c613c" lw 2
set linetype 7 lc rgb "#dc7ec0" lw 2
set linetype 8 lc rgb "#797979" lw 2
set linetype 9 lc rgb "#d5bb67" lw 2
set linetype 10 lc rgb "#82c6e2" lw 2
set linetype cycle 10
