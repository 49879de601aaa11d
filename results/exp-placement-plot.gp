# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 1100,600 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-placement-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "where the pages are: pages per node, medians and intervals (exp-placement)" noenhanced
set style fill solid 0.8 border -1
set boxwidth 0.6
set xrange [-0.5:8 - 0.5]
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set ylabel "pages (median and interval of each part)"
set xtics rotate by -25 noenhanced font ",8"
set key outside right top
plot "exp-placement-plot.dat" using 0:(0 + $2 + $5):xtic(1) with boxes lc 2 title "not present", \
  "" using 0:(0 + $2) with boxes lc 1 title "on node 0", \
  "" using ($0 + -0.06):(0 + $2):(0 + $3):(0 + $4) with yerrorbars pt 7 ps 0.3 lc rgb "#000000" title "interval of each part (at its top)", \
  "" using ($0 + 0.06):(0 + $2 + $5):(0 + $2 + $6):(0 + $2 + $7) with yerrorbars pt 7 ps 0.3 lc rgb "#000000" notitle
