# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 1000,520 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-faults-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "will-it-scale's rate against tasks; dashed: n x one task (exp-faults)" noenhanced
set xlabel "tasks"
set ylabel "ops per second in total (pages; mmap1: map/unmap pairs)"
set xtics 1
set yrange [0:*]
set xrange [0.5:2 + 0.5]
set offsets 0, 0, graph 0.05, 0
set key outside right noenhanced
plot "exp-faults-plot.dat" index 0 using 1:2:3:4 with yerrorlines lc 1 title "mmap1 processes", \
  "" index 0 using 1:5 with lines dt 2 lc 1 notitle, \
  "exp-faults-plot.dat" index 1 using 1:2:3:4 with yerrorlines lc 2 title "mmap1 threads", \
  "" index 1 using 1:5 with lines dt 2 lc 2 notitle, \
  "exp-faults-plot.dat" index 2 using 1:2:3:4 with yerrorlines lc 3 title "page_fault1 processes", \
  "" index 2 using 1:5 with lines dt 2 lc 3 notitle, \
  "exp-faults-plot.dat" index 3 using 1:2:3:4 with yerrorlines lc 4 title "page_fault1 threads", \
  "" index 3 using 1:5 with lines dt 2 lc 4 notitle, \
  "exp-faults-plot.dat" index 4 using 1:2:3:4 with yerrorlines lc 5 title "page_fault2 processes", \
  "" index 4 using 1:5 with lines dt 2 lc 5 notitle, \
  "exp-faults-plot.dat" index 5 using 1:2:3:4 with yerrorlines lc 6 title "page_fault2 threads", \
  "" index 5 using 1:5 with lines dt 2 lc 6 notitle, \
  "exp-faults-plot.dat" index 6 using 1:2:3:4 with yerrorlines lc 7 title "page_fault3 processes", \
  "" index 6 using 1:5 with lines dt 2 lc 7 notitle, \
  "exp-faults-plot.dat" index 7 using 1:2:3:4 with yerrorlines lc 8 title "page_fault3 threads", \
  "" index 7 using 1:5 with lines dt 2 lc 8 notitle
