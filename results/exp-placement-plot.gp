# provenance: commit 5663d94d7ef400b85ce1cad87016f77b855b2147; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1147, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 1100,600 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-placement-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "where the pages are: pages per node, medians (exp-placement)" noenhanced
set style data histogram
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "pages"
set xtics rotate by -25 noenhanced font ",8"
set key outside right top
plot "exp-placement-plot.dat" using 2:xtic(1) title "on node 0", \
  "exp-placement-plot.dat" using 3 title "not present"
