# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 900,520 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-populate-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "where the faults go: ns per page, medians and intervals (exp-populate)" noenhanced
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "ns per page (median and interval of each part)"
set xrange [-0.5:5 - 0.5]
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set xtics rotate by -20 noenhanced
set key below horizontal
plot "exp-populate-plot.dat" using 0:($2 + $5 + $8):xtic(1) with boxes lc rgb "#56b4e9" title "first pass", \
  "" using 0:($2 + $5) with boxes lc rgb "#009e73" title "populate step", \
  "" using 0:2 with boxes lc rgb "#9400d3" title "mapping call", \
  "" using ($0 - 0.15):2:3:4 with yerrorbars pt 7 ps 0.3 lc rgb "#000000" notitle, \
  "" using 0:($2 + $5):($2 + $6):($2 + $7) with yerrorbars pt 7 ps 0.3 lc rgb "#000000" notitle, \
  "" using ($0 + 0.15):($2 + $5 + $8):($2 + $5 + $9):($2 + $5 + $10) with yerrorbars pt 7 ps 0.3 lc rgb "#000000" \
    title "interval of each part (at its top)"
