# Four calls with rbp unmapped, four with rbp at a self-linked frame.
uchain bad 4 >>"$VARS"
