# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 900,500 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-zeropage-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "read before write: the zero page (exp-zeropage)" noenhanced
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.7 border -1
set ylabel "ns per page (median and interval)"
set xtics rotate by -20 noenhanced
set yrange [0:*]
set key below horizontal noenhanced
plot "exp-zeropage-plot.dat" using 2:3:4:xtic(1) title "read pass", \
  "exp-zeropage-plot.dat" using 5:6:7 title "write pass after the read", \
  "exp-zeropage-plot.dat" using 8:9:10 title "read + write", \
  "exp-zeropage-plot.dat" using 11:12:13 title "write-only first touch"
