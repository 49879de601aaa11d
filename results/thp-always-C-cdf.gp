set terminal svg size 800,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "thp-always-C-cdf.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "cycle C: distribution of per-page time, all repetitions (thp-always)" noenhanced
set logscale x
set xlabel "ns per page (store + one timestamp)"
set ylabel "share of pages at or below"
set yrange [0:1]
set key bottom right
plot "thp-always-C-cdf.dat" using 1:2 with steps lw 1.5 title "pass1", \
  "thp-always-C-cdf.dat" using 1:3 with steps lw 1.5 title "pass2"
