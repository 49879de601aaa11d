set terminal svg size 900,500 dynamic enhanced font "Sans,11" background rgb "white"
set output "account-waterfall.svg"
set grid lc rgb "#dddddd"
set key top left opaque box
set title "the account of a 4 KiB first touch: PVM guest (6.18.44-fc-v1272)" noenhanced
unset key
set style fill solid 0.7 border -1
set ylabel "ns per 4 KiB"
set yrange [0:*]
set xrange [0.3:6.7]
set xtics rotate by -20 noenhanced
plot "account-waterfall.dat" using 1:(($3+$4)/2):($1-0.35):($1+0.35):($3<$4?$3:$4):($3<$4?$4:$3):7:xtic(2) \
  with boxxyerror lc rgb variable, \
  "" using 1:4:5:6 with yerrorbars lc rgb "#000000" pt 7 ps 0.5
