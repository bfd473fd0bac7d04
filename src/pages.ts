/**
 * The optional browser pages, an entry of their own (`feathers-query/pages`): their assets are packages the
 * plugin does not install (swagger-ui-dist; graphiql, react and react-dom), which the main entry never loads.
 */
export { swaggerUi } from './ui/swagger-ui'
export type { SwaggerUiOptions } from './ui/swagger-ui'
export { graphiql } from './ui/graphiql'
export type { GraphiqlOptions as GraphiqlPageOptions } from './ui/graphiql'
