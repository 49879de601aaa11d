# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 800,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "C-cdf.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "cycle C: distribution of per-page time, all repetitions (main)" noenhanced
set logscale x
set xlabel "ns per page (store + one timestamp)"
set ylabel "share of pages at or below"
set yrange [0:1]
set key bottom right
plot "C-cdf.dat" using 1:2 with steps lw 1.5 title "pass1", \
  "C-cdf.dat" using 1:3 with steps lw 1.5 title "pass2", \
  "C-cdf.dat" using 1:4 with steps lw 1.5 title "THP=always pass1", \
  "C-cdf.dat" using 1:5 with steps lw 1.5 title "THP=always pass2"
