# Runs calls.py under sys.setprofile and prints, on standard error, each
# Python-level call and return of calls.py's frames as the case's script
# prints the markers: the expectation, from the interpreter itself.
import sys

path = sys.argv[1]


def prof(frame, event, arg):
    code = frame.f_code
    if event in ("call", "return") and code.co_filename == path:
        arrow = "->" if event == "call" else "<-"
        print(f"{arrow} {code.co_filename}:{code.co_name}:{frame.f_lineno}", file=sys.stderr)


with open(path) as f:
    code = compile(f.read(), path, "exec")
sys.setprofile(prof)
exec(code, {"__name__": "__main__"})
sys.setprofile(None)
