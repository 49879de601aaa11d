# provenance: commit 4ff99391493eb69ffb4a1aaea6794c308fff0f9d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 26 model 2 stepping 1 microcode ?; kernel 6.18.44-fc-v1272, guest PVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 900,500 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-host-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "the host's share of a first touch: fresh, reused, populated, 2 MiB; guest time against steal (exp-host)" noenhanced
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.7 border -1
set ylabel "ns per page (median and interval)"
set xtics rotate by -20 noenhanced
set yrange [0:*]
set key below horizontal noenhanced
plot "exp-host-plot.dat" using 2:3:4:xtic(1) title "the step (touch, or the mmap call)", \
  "exp-host-plot.dat" using 5:6:7 title "its time on the CPU", \
  "exp-host-plot.dat" using 8:9:10 title "guest system time", \
  "exp-host-plot.dat" using 11:12:13 title "waiting for the CPU", \
  "exp-host-plot.dat" using 14:15:16 title "steal on its CPU", \
  "exp-host-plot.dat" using 17:18:19 title "after", \
  "exp-host-plot.dat" using 20:21:22 title "after_oncpu", \
  "exp-host-plot.dat" using 23:24:25 title "after_sys"
