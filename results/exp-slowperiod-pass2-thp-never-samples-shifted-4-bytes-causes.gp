# provenance: commit 53a8d58558391a9d781cbf200fed71df23cff76d; ftrun 0.1.0, gcc 12.2.0, glibc 2.36; CPU AuthenticAMD family 25 model 17 stepping 1 microcode 0x1000065; kernel 6.18.44-fc-v1300, guest KVM, perf_event_paranoid 2, kptr_restrict 0; THP madvise, defrag madvise, sizes 16kB: never, 32kB: never, 64kB: never, 128kB: never, 256kB: never, 512kB: never, 1024kB: never, 2048kB: inherit (? = not recorded)
set terminal svg size 800,480 dynamic enhanced font "Sans,11" background rgb "white"
set output "exp-slowperiod-pass2-thp-never-samples-shifted-4-bytes-causes.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "THP=never, samples shifted 4 bytes, pass 2: slow pages by cause, every repetition (exp-slowperiod)" noenhanced
set logscale y
set key above horizontal
set xlabel "page index"
set ylabel "ns per page (store + one timestamp)"
set xrange [0:65536]
plot "exp-slowperiod-pass2-thp-never-samples-shifted-4-bytes-causes.dat" index 0 using 1:2 with points pt 7 ps 0.35 lc rgb "#2ca02c" title "timer interrupt (17)", \
  "exp-slowperiod-pass2-thp-never-samples-shifted-4-bytes-causes.dat" index 1 using 1:2 with points pt 7 ps 0.35 lc rgb "#9a9a9a" title "no guest event (83425)"
