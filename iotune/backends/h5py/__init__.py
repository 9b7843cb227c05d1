"""HDF5 through h5py: knobs, trials (serial and parallel ranks), exports."""
