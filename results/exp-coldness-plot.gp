# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 800,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-coldness-plot.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "first touch after a wait (exp-coldness)" noenhanced
set xlabel "seconds waited after the previous release (-1: the process's first mapping)"
set ylabel "pass 1, ns per page"
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set key above horizontal
plot "exp-coldness-plot.dat" using 1:($1 >= 0 ? $2 : 1/0) with points pt 7 lc rgb "#1f4e99" title "a repetition", \
  "" using 1:($1 < 0 ? $2 : 1/0) with points pt 9 ps 1.5 lc rgb "#cc0000" title "first mapping of the process"
