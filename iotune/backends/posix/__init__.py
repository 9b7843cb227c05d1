"""Raw POSIX files (IOR's and fio's knobs): knobs, trials, exports."""
