import {
  type GraphQLResolveInfo,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  type GraphQLFieldConfigMap,
  type GraphQLInputType
} from 'graphql'
import { upperFirst } from '../../resource/naming'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceParams, ResourceRecord } from '../../model/records'
import { allowsMulti } from '../../service/multi'
import type { GraphqlContext } from './context'
import { withWork } from '../type/field-work'
import { objectType } from '../type/object-type'
import type { GraphqlTypes } from '../type/registry'
import { createInputType, updateInputType } from '../type/mutation-inputs'
import { inputObject, namedFilter, nonNull, requiredFilter } from '../type/inputs'
import { namingInput } from './input-errors'
import { selectedRecordFields } from './selection'
import {
  deleteManyResponseType,
  deleteResponseType,
  updateManyResponseType
} from '../type/mutation-responses'
import { copyWith } from '../../common/copy-with'
import type { GraphqlSchemaPart } from './schema-part'

type Fields = GraphQLFieldConfigMap<unknown, GraphqlContext>
type Input = Record<string, unknown>

/** graphql-js hands input objects over with null prototypes; the services get plain ones. */
const plain = (value: unknown) => ({ ...(value as Input) })

/** `createOne<R>` and, where `multi` allows it, `createMany<Rs>`. */
function createMutations(types: GraphqlTypes, resource: ResolvedResource): Fields {
  const { definition, name, singular, plural } = resource
  const Plural = upperFirst(plural)
  const node = () => objectType(types, resource)
  const create = definition.create?.disabled ? undefined : createInputType(types, resource)
  if (!create) return {}
  const fields: Fields = {}
  fields[`createOne${name}`] = withWork(
    {
      type: nonNull(node()),
      args: {
        input: {
          type: nonNull(
            inputObject(types, `CreateOne${name}Input`, {
              [singular]: [nonNull(create), 'The record to create']
            })
          )
        }
      },
      resolve: (_source, args, context, info) =>
        namingInput(`input.${singular}`, () =>
          context
            .service(resource)
            .create(plain((args.input as Input)[singular]), answering(context, info, resource))
        )
    },
    { statements: 'once' }
  )
  if (allowsMulti(resource, 'create')) {
    fields[`createMany${Plural}`] = withWork(
      {
        type: nonNull(new GraphQLList(nonNull(node()))),
        args: {
          input: {
            type: nonNull(
              inputObject(types, `CreateMany${Plural}Input`, {
                [plural]: [nonNull(new GraphQLList(nonNull(create))), 'Array of records to create']
              })
            )
          }
        },
        resolve: (_source, args, context, info) =>
          namingInput(`input.${plural}`, () =>
            context
              .service(resource)
              .create(
                ((args.input as Input)[plural] as unknown[]).map(plain),
                answering(context, info, resource)
              )
          )
      },
      { statements: 'once' }
    )
  }
  return fields
}

/**
 * `upsertOne<R>` and, where `multi` allows create, `upsertMany<Rs>`, beside nestjs-query's names: where the
 * resource has an upsert key (which needs create and update enabled). Each takes the create input, as the
 * upsert may create, and answers the records as written.
 */
function upsertMutations(types: GraphqlTypes, resource: ResolvedResource): Fields {
  const { name, plural } = resource
  const Plural = upperFirst(plural)
  const node = () => objectType(types, resource)
  const create = resource.upsertKey ? createInputType(types, resource) : undefined
  if (!create) return {}
  const description = resource.definition.upsert?.description
  const key = resource.upsertKey!.map((field) => field.name).join(', ')
  const fields: Fields = {}
  fields[`upsertOne${name}`] = withWork(
    {
      type: nonNull(node()),
      description: description ?? `Creates the ${name}, or changes the one with the same ${key}.`,
      args: {
        input: {
          type: nonNull(
            inputObject(types, `UpsertOne${name}Input`, {
              upsert: [nonNull(create), `The record to create, or to write over the one with its ${key}`]
            })
          )
        }
      },
      resolve: (_source, args, context, info) =>
        namingInput('input.upsert', () =>
          context
            .service(resource)
            .upsert(plain((args.input as Input).upsert), answering(context, info, resource))
        )
    },
    { statements: 'once' }
  )
  if (allowsMulti(resource, 'create')) {
    fields[`upsertMany${Plural}`] = withWork(
      {
        type: nonNull(new GraphQLList(nonNull(node()))),
        description: description ?? `Creates each ${name}, or changes the one with the same ${key}.`,
        args: {
          input: {
            type: nonNull(
              inputObject(types, `UpsertMany${Plural}Input`, {
                upserts: [nonNull(new GraphQLList(nonNull(create))), 'Records to create or write over']
              })
            )
          }
        },
        resolve: (_source, args, context, info) =>
          namingInput('input.upserts', () =>
            context
              .service(resource)
              .upsert(
                ((args.input as Input).upserts as unknown[]).map(plain),
                answering(context, info, resource)
              )
          )
      },
      { statements: 'once' }
    )
  }
  return fields
}

/**
 * A versioned resource's `version` input: the version of the record the mutation was made against; another
 * stored version is `PRECONDITION_FAILED` (`PRECONDITION_REQUIRED` without one where the resource requires it).
 */
function versionInput(
  resource: ResolvedResource,
  action: string
): Record<string, [GraphQLInputType, string]> {
  if (!resource.version) return {}
  const described = `The record's ${resource.version.field.name} as read: ${action} it only while it still is that version.`
  return { version: [GraphQLInt, described] }
}

/** The call's params with the version the input names, if any, as the precondition of the write. */
/**
 * The params of a write whose records the client reads back: what it selected is checked against its field
 * rules before anything is written, as a query's selection is.
 */
const answering = (context: GraphqlContext, info: GraphQLResolveInfo, resource: ResolvedResource) =>
  context.params({ answerFields: selectedRecordFields(info, resource, []) })

const withVersionOf = (input: Input, params: ResourceParams): ResourceParams =>
  input.version === undefined || input.version === null
    ? params
    : copyWith(params, { ifMatch: input.version as number })

/** `updateOne<R>` and, where `multi` allows it, `updateMany<Rs>` (by a filter that must hold a condition). */
function updateMutations(types: GraphqlTypes, resource: ResolvedResource): Fields {
  const { definition, name, plural } = resource
  const Plural = upperFirst(plural)
  const node = () => objectType(types, resource)
  const update = definition.update?.disabled ? undefined : updateInputType(types, resource)
  if (!update) return {}
  const fields: Fields = {}
  fields[`updateOne${name}`] = withWork(
    {
      type: nonNull(node()),
      args: {
        input: {
          type: nonNull(
            inputObject(types, `UpdateOne${name}Input`, {
              id: [nonNull(GraphQLID), 'The id of the record to update'],
              update: [nonNull(update), 'The update to apply.'],
              ...versionInput(resource, 'update')
            })
          )
        }
      },
      resolve: (_source, args, context, info) => {
        const input = args.input as Input
        const params = withVersionOf(input, answering(context, info, resource))
        return namingInput('input.update', () =>
          context.service(resource).patch(input.id as string, plain(input.update), params)
        )
      }
    },
    { statements: 'once' }
  )
  if (allowsMulti(resource, 'patch')) {
    fields[`updateMany${Plural}`] = withWork(
      {
        type: nonNull(updateManyResponseType(types)),
        args: {
          input: {
            type: nonNull(
              inputObject(types, `UpdateMany${Plural}Input`, {
                filter: [namedFilter(types, resource, 'Update'), 'Filter used to find fields to update'],
                update: [nonNull(update), 'The update to apply to all records found using the filter']
              })
            )
          }
        },
        async resolve(_source, args, context) {
          const input = args.input as Input
          const filter = requiredFilter(resource, input.filter)
          const updated = await namingInput('input.update', () =>
            context.service(resource).patch(null, plain(input.update), context.params({ filter }))
          )
          return { updatedCount: updated.length }
        }
      },
      { statements: 'once' }
    )
  }
  return fields
}

/** `deleteOne<R>` and, where `multi` allows it, `deleteMany<Rs>` (by a filter that must hold a condition). */
function deleteMutations(types: GraphqlTypes, resource: ResolvedResource): Fields {
  const { definition, name, plural } = resource
  const Plural = upperFirst(plural)
  if (definition.delete?.disabled) return {}
  const fields: Fields = {}
  fields[`deleteOne${name}`] = withWork(
    {
      type: nonNull(deleteResponseType(types, resource)),
      args: {
        input: {
          type: nonNull(
            inputObject(types, `DeleteOne${name}Input`, {
              id: [nonNull(GraphQLID), 'The id of the record to delete.'],
              ...versionInput(resource, 'delete')
            })
          )
        }
      },
      async resolve(_source, args, context, info) {
        const input = args.input as Input
        const removed: ResourceRecord = await context
          .service(resource)
          .remove(input.id as string, withVersionOf(input, answering(context, info, resource)))
        // As nestjs-query answers it: the record as it was, without the id it no longer has.
        return copyWith(removed, { [resource.idField.name]: null })
      }
    },
    { statements: 'once' }
  )
  if (allowsMulti(resource, 'remove')) {
    fields[`deleteMany${Plural}`] = withWork(
      {
        type: nonNull(deleteManyResponseType(types)),
        args: {
          input: {
            type: nonNull(
              inputObject(types, `DeleteMany${Plural}Input`, {
                filter: [namedFilter(types, resource, 'Delete'), 'Filter to find records to delete']
              })
            )
          }
        },
        async resolve(_source, args, context) {
          const filter = requiredFilter(resource, (args.input as Input).filter)
          const removed = await context.service(resource).remove(null, context.params({ filter }))
          return { deletedCount: removed.length }
        }
      },
      { statements: 'once' }
    )
  }
  return fields
}

/**
 * The mutations of a resource, with nestjs-query's names and shapes: `createOne<R>`/`createMany<Rs>`,
 * `updateOne<R>`/`updateMany<Rs>`, `deleteOne<R>`/`deleteMany<Rs>`, and `upsertOne<R>`/`upsertMany<Rs>` where
 * the resource has an upsert key. Each is one call of the registered service
 * (`create`, `patch`, `remove`), so guards, validation, hooks, `authorize`, transactions and events apply as
 * over REST. A disabled endpoint has no mutations; the many-mutations exist where `multi` allows the method
 * and change at most `maxMulti` records, in one transaction.
 */
function resourceMutationFields(types: GraphqlTypes, resource: ResolvedResource): Fields {
  return {
    ...createMutations(types, resource),
    ...upsertMutations(types, resource),
    ...updateMutations(types, resource),
    ...deleteMutations(types, resource)
  }
}

export const mutationSchemaPart: GraphqlSchemaPart = {
  name: 'mutations',
  mutationFields: (resource, types) => resourceMutationFields(types, resource)
}
