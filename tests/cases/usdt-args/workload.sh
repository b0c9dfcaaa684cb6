# Per iteration i = 0..4: (signed char)(-5 - i), (unsigned char)250,
# (short)-300, (unsigned int)4000000000, big - i, i; and big. Sums:
# -35, 1250, -1500, 20000000000, 5 * big - 10, 10; 5 * big.
usdt 5 >/dev/null
