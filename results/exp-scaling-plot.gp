# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 1000,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-scaling-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "first-touch faults per second against threads (exp-scaling)" noenhanced
set xlabel "threads"
set ylabel "faults per second (median and interval)"
set xtics 1
set xrange [0.5:2 + 0.5]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set format y "%.0f"
set key outside right top vertical
plot "exp-scaling-plot.dat" using 1:2 with lines dt 2 lc rgb "#888888" title "ideal: 1 thread x n", \
  "" using ($1 - 0.03):3:4:5 with yerrorlines pt 7 lc rgb "#1f4e99" title "total, one shared mapping", \
  "" using ($1 - 0.03):6:7:8 with yerrorlines pt 6 lc rgb "#1f4e99" title "per thread, one shared mapping", \
  "" using ($1 + 0.03):9:10:11 with yerrorlines pt 5 lc rgb "#cc5500" title "total, a mapping per thread", \
  "" using ($1 + 0.03):12:13:14 with yerrorlines pt 4 lc rgb "#cc5500" \
    title "per thread, a mapping per thread"
