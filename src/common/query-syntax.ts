/**
 * The request header by which a Feathers client asks a resource's base path for Feathers' query syntax and
 * Feathers' answers (`X-Query-Syntax: feathers`), shared by the server and `feathers-query/client`.
 *
 * Spelled as the docs spell it: HTTP reads header names in any case, but fetch joins two keys that differ
 * only in case into one value (`feathers, feathers`), which the server reads as `feathers` too.
 */
export const QUERY_SYNTAX_HEADER = 'X-Query-Syntax'

/** The header's value asking for Feathers' syntax. */
export const FEATHERS_QUERY_SYNTAX = 'feathers'
