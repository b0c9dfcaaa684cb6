^Ready!$
