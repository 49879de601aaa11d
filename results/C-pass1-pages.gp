# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 800,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "C-pass1-pages.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "cycle C, pass1: ns per page against page index (main)" noenhanced
set logscale y
set yrange [10:*]
set key above horizontal
set xlabel "page index (bins of 256 pages; the last repetition's samples)"
set ylabel "ns per page (store + one timestamp)"
set y2label "pages above SLOW\\_NS in the bin (of 256)"
set y2range [0:281.6]
set xrange [0:262144]
set y2tics
set ytics nomirror
set arrow from graph 0, first 200 to graph 1, first 200 nohead dt 2 lc rgb "#aa0000"
set label "SLOW\\_NS = 200 ns" at graph 0.01, first 200 offset 0,0.6 tc rgb "#aa0000"
plot "C-pass1-pages.dat" using 1:5 axes x1y2 with steps lw 0.8 lc rgb "#e8a060" title "pages above SLOW\\_NS (right)", \
  "" using 1:2:4 with filledcurves fs transparent solid 0.6 lc rgb "#9db4dd" title "min to max of each bin", \
  "" using 1:3 with lines lw 1.5 lc rgb "#1f4e99" title "median of each bin"
