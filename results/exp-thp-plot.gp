# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 800,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-thp-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "faults and ns per 4 KiB against the page obtained (exp-thp)" noenhanced
set logscale y
set ylabel "ns per 4 KiB (median and interval)"
set y2label "pass-1 faults per GiB"
set logscale y2
set y2tics
set ytics nomirror
set format y "%g"
set format y2 "%.0f"
set xrange [-0.5:3 - 0.5]
set xtics noenhanced
set offsets 0, 0, graph 0.05, graph 0.05
set key below horizontal
plot "exp-thp-plot.dat" using ($0 - 0.1):4:5:6 with yerrorbars pt 7 lc rgb "#1f4e99" title "pass 1", \
  "" using ($0 + 0.1):7:8:9 with yerrorbars pt 5 lc rgb "#cc5500" title "re-touch", \
  "" using 0:3:xtic(10) axes x1y2 with points pt 4 ps 1.5 lc rgb "#228822" \
    title "pass-1 faults per GiB (right)"
