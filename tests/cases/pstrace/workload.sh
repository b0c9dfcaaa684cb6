# A shell running a shell that execs a script called pstrace-marker: the
# chain starts with the inner shell, then the outer one and the harness's
# shells, and stops before pid 1.
printf '#!/bin/sh\ntrue\n' >pstrace-marker
chmod +x pstrace-marker
sh -c "sh -c '$CASE_OUT/pstrace-marker; true'; true"
