# Three passes through main -> uchain_a -> uchain_b -> uchain_c.
uchain 3 >>"$VARS"
