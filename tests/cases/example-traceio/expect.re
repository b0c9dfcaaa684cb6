^ +[0-9]+ +dd r: +400 KiB w: +400 KiB$
