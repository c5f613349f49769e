package api

// ListingDate exposes listingDate to the fuzz target.
var ListingDate = listingDate
