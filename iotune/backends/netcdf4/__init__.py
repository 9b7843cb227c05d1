"""netCDF4 through netCDF4-python (netCDF-C over HDF5): knobs, trials, exports."""
