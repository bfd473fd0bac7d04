import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import socketioClient from '@feathersjs/socketio-client'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { io } from 'socket.io-client'
import WebSocket from 'ws'
import { createClient } from 'graphql-ws'
import { defineResource, FilterableField, IDField, QUERY_SYNTAX_HEADER } from '../src'
import { knexConfig } from '../example/database'
import { codes, graphql } from './support/graphql'
import { wsUrl } from './support/graphql-ws'
import { pluginApp } from './support/plugin-app'
import { forEachDatabase } from './support/server'
import { pollUntil } from './support/eventually'

/** A caller's role is its `x-role` header: admins are not ruled, staff are. */
const roleOf = (params: { headers?: Record<string, unknown> }) => params.headers?.['x-role']

const departments = defineResource({
  name: 'Department',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    name: FilterableField(Type.String()),
    budget: FilterableField(Type.Integer())
  }),
  many: { employees: { resource: 'Employee', foreignKey: 'departmentId', filterable: true } },
  enableAggregate: true,
  fieldRules: (params) => (roleOf(params) === 'admin' ? undefined : { budget: false })
})

const employees = defineResource({
  name: 'Employee',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    name: FilterableField(Type.String()),
    email: FilterableField(Type.String()),
    salary: FilterableField(Type.Integer()),
    grade: FilterableField(Type.Integer()),
    departmentId: FilterableField(Type.Integer())
  }),
  one: { department: { resource: 'Department', foreignKey: 'departmentId', filterable: true } },
  query: { enableTotalCount: true },
  enableAggregate: true,
  multi: true,
  graphql: { keyset: true },
  // Asynchronous, as a rule that looks the caller's role up would be.
  fieldRules: async (params) =>
    roleOf(params) === 'admin'
      ? undefined
      : { salary: false, email: { read: false }, grade: { groupBy: false, aggregate: false } }
})

/** Keyset-paged by default by a field staff may sort by but not read. */
const tickets = defineResource({
  name: 'Ticket',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    title: FilterableField(Type.String()),
    priority: FilterableField(Type.Integer())
  }),
  query: { defaultSort: [{ field: 'priority', direction: 'DESC' }] },
  graphql: { keyset: true },
  fieldRules: (params) => (roleOf(params) === 'admin' ? undefined : { priority: { read: false } })
})

async function fieldRulesApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('departments', (columns) => {
    columns.increments('id')
    columns.string('name').notNullable()
    columns.integer('budget').notNullable()
  })
  await db.schema.createTable('employees', (columns) => {
    columns.increments('id')
    columns.string('name').notNullable()
    columns.string('email').notNullable()
    columns.integer('salary').notNullable()
    columns.integer('grade').notNullable()
    columns.integer('departmentId').notNullable()
  })
  await db('departments').insert([
    { name: 'ops', budget: 100 },
    { name: 'lab', budget: 900 }
  ])
  await db('employees').insert([
    { name: 'ann', email: 'ann@x.org', salary: 5000, grade: 1, departmentId: 1 },
    { name: 'bob', email: 'bob@x.org', salary: 7000, grade: 2, departmentId: 2 },
    { name: 'cy', email: 'cy@x.org', salary: 9000, grade: 2, departmentId: 2 }
  ])
  await db.schema.createTable('tickets', (columns) => {
    columns.increments('id')
    columns.string('title').notNullable()
    columns.integer('priority').notNullable()
  })
  await db('tickets').insert([
    { title: 'low', priority: 1 },
    { title: 'high', priority: 9 }
  ])
  const made = pluginApp(db, [departments, employees, tickets], { transports: true })
  // What the CLI's channels.ts does: every connection hears every event (the rules then decide what of it).
  made.app.on('connection', (connection) => made.app.channel('everyone').join(connection))
  made.app.publish(() => made.app.channel('everyone'))
  return made
}

const ADMIN = { 'x-role': 'admin' }
const STAFF = { 'x-role': 'staff' }
const FEATHERS = { [QUERY_SYNTAX_HEADER]: 'feathers' }
const HIDDEN = ['salary', 'email']

/** Every record of a list has none of the fields `names`, or (for admins) all of them. */
function assertFields(records: Array<Record<string, unknown>>, names: string[], present: boolean) {
  assert.ok(records.length > 0)
  for (const record of records)
    for (const name of names) assert.equal(name in record, present, `${name} in ${JSON.stringify(record)}`)
}

forEachDatabase(
  'Field rules: per caller, on every surface and every use',
  (env) => {
    const http = (path: string, headers: Record<string, string>, method = 'GET', body?: unknown) =>
      env.server.http(method, path, body, headers)

    describe('reading', () => {
      it('REST list, get and export: staff get no salary or email (absent, not null), admins get both', async () => {
        for (const [headers, present] of [
          [ADMIN, true],
          [STAFF, false]
        ] as const) {
          const list = await http('/employees', headers)
          assert.equal(list.status, 200)
          assertFields(list.body.nodes, HIDDEN, present)
          assertFields([(await http('/employees/1', headers)).body], HIDDEN, present)
          const csv = await http('/employees/export', headers)
          const header = csv.text.replace(/^\uFEFF/, '').split('\n')[0]
          assert.equal(header.includes('"salary"') || header.includes('salary'), present, header)
          assert.equal(csv.text.includes('5000'), present)
          const ndjson = await fetch(`${env.server.baseUrl}/employees/export`, {
            headers: { ...headers, accept: 'application/x-ndjson' }
          })
          const lines = (await ndjson.text()).trim().split('\n')
          assertFields(
            lines.map((line) => JSON.parse(line)),
            HIDDEN,
            present
          )
          // Fields the rule leaves alone are there for both.
          assert.equal(list.body.nodes[0].grade, 1)
        }
        const related = await http('/departments', STAFF)
        assertFields(related.body.nodes, ['budget'], false)
      })

      it('Feathers syntax over REST, the Feathers REST client and socket.io: the same records', async () => {
        const page = await http('/employees', { ...STAFF, ...FEATHERS })
        assertFields(page.body.data, HIDDEN, false)
        const rest = feathers().configure(
          restClient(env.server.baseUrl).fetch(fetch, { headers: { ...STAFF, ...FEATHERS } })
        )
        assertFields((await rest.service('employees').find()).data, HIDDEN, false)
        assertFields([await rest.service('employees').get(1)], HIDDEN, false)
        const socket = io(env.server.baseUrl, { extraHeaders: STAFF, transports: ['websocket'] })
        try {
          const client = feathers().configure(socketioClient(socket))
          assertFields((await client.service('employees').find()).data, HIDDEN, false)
          const admin = io(env.server.baseUrl, { extraHeaders: ADMIN, transports: ['websocket'] })
          try {
            const adminClient = feathers().configure(socketioClient(admin))
            assertFields((await adminClient.service('employees').find()).data, HIDDEN, true)
          } finally {
            admin.close()
          }
        } finally {
          socket.close()
        }
      })

      it('server code is not ruled: internal calls read every field', async () => {
        const all = await env.server.app.service('employees').find({ paginate: false })
        assertFields(all, HIDDEN, true)
      })

      it('GraphQL: selecting a field the caller may not read is refused by name; admins read it', async () => {
        const query = '{ employees { edges { node { name salary } } } }'
        const staff = await graphql(env.server, query, undefined, STAFF)
        assert.deepEqual(codes(staff), ['BAD_USER_INPUT'])
        assert.match(staff.errors![0].message + JSON.stringify(staff.errors), /salary/)
        const admin = await graphql(env.server, query, undefined, ADMIN)
        assert.equal(admin.errors, undefined)
        assert.equal(admin.data.employees.edges[0].node.salary, 5000)
        const single = await graphql(env.server, '{ employee(id: 1) { name email } }', undefined, STAFF)
        assert.deepEqual(codes(single), ['BAD_USER_INPUT'])
        const allowed = await graphql(env.server, '{ employee(id: 1) { name grade } }', undefined, STAFF)
        assert.deepEqual(allowed.data.employee, { name: 'ann', grade: 1 })
        const relation = await graphql(
          env.server,
          '{ employee(id: 2) { name department { name budget } } }',
          undefined,
          STAFF
        )
        assert.deepEqual(codes(relation), ['BAD_USER_INPUT'])
        assert.match(JSON.stringify(relation.errors), /budget/)
      })
    })

    /**
     * Each use of each field, as staff: refused (400 naming the field) or answered. Every refused cell is
     * answered for admins with the same request, so each one can fail both ways.
     */
    describe('the matrix of uses', () => {
      const cells: Array<[string, string, 'refused' | 'allowed', string]> = [
        // [use, field, staff's outcome, GraphQL operation]
        ['filter', 'salary', 'refused', '{ employees(filter: { salary: { gt: 6000 } }) { totalCount } }'],
        ['filter', 'email', 'allowed', '{ employees(filter: { email: { like: "b%" } }) { totalCount } }'],
        ['filter', 'grade', 'allowed', '{ employees(filter: { grade: { eq: 2 } }) { totalCount } }'],
        [
          'relation filter',
          'department.budget',
          'refused',
          '{ employees(filter: { department: { budget: { gt: 500 } } }) { totalCount } }'
        ],
        [
          'relation filter',
          'department.name',
          'allowed',
          '{ employees(filter: { department: { name: { eq: "lab" } } }) { totalCount } }'
        ],
        [
          'sort',
          'salary',
          'refused',
          '{ employees(sorting: [{ field: salary, direction: DESC }]) { edges { node { name } } } }'
        ],
        [
          'sort (keyset cursor)',
          'email',
          'refused',
          '{ employees(sorting: [{ field: email, direction: DESC }]) { edges { node { name } } } }'
        ],
        [
          'sort',
          'grade',
          'allowed',
          '{ employees(sorting: [{ field: grade, direction: DESC }]) { edges { node { name } } } }'
        ],
        [
          'sort by a relation aggregate',
          'employees.salary',
          'refused',
          '{ departments(sorting: [{ path: "employees.salary", aggregate: SUM, direction: DESC }]) { edges { node { name } } } }'
        ],
        [
          'sort by a relation count',
          'employees.grade',
          'allowed',
          '{ departments(sorting: [{ path: "employees", aggregate: COUNT, direction: DESC }]) { edges { node { name } } } }'
        ],
        [
          'to-many relation filter',
          'employees.salary',
          'refused',
          '{ departments(filter: { employees: { salary: { gt: 6000 } } }) { edges { node { name } } } }'
        ],
        [
          'to-many relation filter (none)',
          'employees.salary',
          'refused',
          '{ departments(filter: { employeesNone: { salary: { gt: 6000 } } }) { edges { node { name } } } }'
        ],
        [
          'relation aggregate',
          'employees.salary',
          'refused',
          '{ departments { edges { node { name employeesAggregate { max { salary } } } } } }'
        ],
        [
          'relation field',
          'employees.email',
          'refused',
          '{ departments { edges { node { name employees { edges { node { email } } } } } } }'
        ],
        [
          'connection aggregate',
          'salary',
          'refused',
          '{ employees { aggregate { avg { salary } } edges { node { name } } } }'
        ],
        ['groupBy', 'grade', 'refused', '{ employeeAggregate { groupBy { grade } count { id } } }'],
        ['groupBy', 'email', 'refused', '{ employeeAggregate { groupBy { email } count { id } } }'],
        ['groupBy', 'name', 'allowed', '{ employeeAggregate { groupBy { name } count { id } } }'],
        [
          'groupBy relation path',
          'department.budget',
          'refused',
          '{ employeeAggregate { groupBy { department { budget } } count { id } } }'
        ],
        ['aggregate', 'salary', 'refused', '{ employeeAggregate { max { salary } } }'],
        ['aggregate count', 'salary', 'refused', '{ employeeAggregate { count { salary } } }'],
        ['aggregate', 'email', 'refused', '{ employeeAggregate { max { email } } }'],
        ['aggregate count', 'email', 'allowed', '{ employeeAggregate { count { email } } }'],
        ['aggregate', 'grade', 'refused', '{ employeeAggregate { sum { grade } } }'],
        [
          'having',
          'salary',
          'refused',
          '{ employeeAggregate(having: { max: { salary: { gt: 1 } } }) { groupBy { name } count { id } } }'
        ],
        [
          'aggregate sorting',
          'salary',
          'refused',
          '{ employeeAggregate(sorting: [{ field: salary, aggregate: MAX, direction: DESC }]) { groupBy { name } } }'
        ],
        [
          'aggregate filter',
          'salary',
          'refused',
          '{ employeeAggregate(filter: { salary: { gt: 1 } }) { count { id } } }'
        ]
      ]
      for (const [use, field, outcome, operation] of cells) {
        it(`${use} of ${field}: ${outcome} for staff, answered for admins (GraphQL)`, async () => {
          const staff = await graphql(env.server, operation, undefined, STAFF)
          const admin = await graphql(env.server, operation, undefined, ADMIN)
          assert.equal(admin.errors, undefined, JSON.stringify(admin.errors))
          if (outcome === 'allowed') {
            assert.equal(staff.errors, undefined, JSON.stringify(staff.errors))
            assert.deepEqual(staff.data, admin.data)
            return
          }
          assert.deepEqual(codes(staff), ['BAD_USER_INPUT'], JSON.stringify(staff))
          const name = field.split('.').pop()!
          assert.match(JSON.stringify(staff.errors), new RegExp(`${name} may not be`))
        })
      }

      const feathersCells: Array<[string, string, number]> = [
        ['/employees?salary[$gt]=1', 'salary', 400],
        ['/employees?$sort[salary]=1', 'salary', 400],
        ['/employees?$select[]=salary', 'salary', 400],
        ['/employees?$select[]=email', 'email', 400],
        ['/employees?email=ann@x.org', 'email', 200],
        ['/employees?$sort[email]=1', 'email', 200],
        ['/employees?department[budget][$gt]=1', 'budget', 400],
        ['/employees?$sort[department.budget]=1', 'budget', 400],
        ['/employees?$sort[department.name]=1', 'name', 200],
        ['/departments?$sort[sum(employees.salary)]=1', 'salary', 400],
        ['/employees/1?$select[]=salary', 'salary', 400],
        ['/employees?$select[]=grade', 'grade', 200]
      ]
      for (const [path, field, status] of feathersCells) {
        it(`Feathers syntax ${path}: ${status} for staff, 200 for admins`, async () => {
          const staff = await http(path, { ...STAFF, ...FEATHERS })
          const admin = await http(path, { ...ADMIN, ...FEATHERS })
          assert.equal(admin.status, 200, JSON.stringify(admin.body))
          assert.equal(staff.status, status, JSON.stringify(staff.body))
          if (status === 400) assert.match(JSON.stringify(staff.body), new RegExp(`${field} may not be`))
        })
      }

      it("keyset cursors of the resource's default sort would carry a field staff may not read: refused", async () => {
        const query = '{ tickets { edges { cursor node { title } } } }'
        const staff = await graphql(env.server, query, undefined, STAFF)
        assert.deepEqual(codes(staff), ['BAD_USER_INPUT'])
        assert.match(JSON.stringify(staff.errors), /priority may not be read/)
        const admin = await graphql(env.server, query, undefined, ADMIN)
        assert.deepEqual(
          admin.data.tickets.edges.map((edge: any) => edge.node.title),
          ['high', 'low']
        )
        // Sorted by what staff may read, the same list pages for them.
        const own = await graphql(
          env.server,
          '{ tickets(sorting: [{ field: title, direction: ASC }]) { edges { node { title } } } }',
          undefined,
          STAFF
        )
        assert.equal(own.errors, undefined, JSON.stringify(own.errors))
      })

      it('REST equality filter and REST aggregate: refused by name for staff', async () => {
        const filtered = await http('/employees?salary=5000', STAFF)
        assert.equal(filtered.status, 400)
        assert.match(JSON.stringify(filtered.body), /salary may not be filtered on/)
        assert.equal((await http('/employees?salary=5000', ADMIN)).body.nodes.length, 1)
        assert.equal((await http('/employees/aggregate?groupBy=grade&count=id', STAFF)).status, 400)
        assert.equal((await http('/employees/aggregate?groupBy=grade&count=id', ADMIN)).status, 200)
        assert.equal((await http('/employees/aggregate?count=email', STAFF)).status, 200)
      })

      it('the service API for a client call: aggregate refused, internal call answered', async () => {
        const service = env.server.app.service('employees') as any
        const refused = await service
          .aggregate({ max: ['salary'] }, { provider: 'rest', headers: STAFF })
          .catch((error: any) => error)
        assert.equal(refused.code, 400)
        const internal = await service.aggregate({ max: ['salary'] })
        assert.equal(internal[0].max.salary, 9000)
      })
    })

    describe('writing', () => {
      it('REST and Feathers clients: the writer gets its readable part', async () => {
        const created = await http('/employees', STAFF, 'POST', {
          name: 'dee',
          email: 'dee@x.org',
          salary: 1,
          grade: 1,
          departmentId: 1
        })
        assert.equal(created.status, 201)
        assertFields([created.body], HIDDEN, false)
        const patched = await http(`/employees/${created.body.id}`, STAFF, 'PATCH', { grade: 3 })
        assertFields([patched.body], HIDDEN, false)
        const admin = await http(`/employees/${created.body.id}`, ADMIN, 'PATCH', { grade: 4 })
        assert.equal(admin.body.salary, 1)
        const removed = await http(`/employees/${created.body.id}`, STAFF, 'DELETE')
        assertFields([removed.body], HIDDEN, false)
      })

      it('GraphQL mutations: selecting a forbidden field is refused before anything is written', async () => {
        const before = await env.server.app.service('employees').find({ paginate: false })
        const refused = await graphql(
          env.server,
          'mutation { createOneEmployee(input: { employee: { name: "eve", email: "e@x", salary: 2, grade: 1, departmentId: 1 } }) { id salary } }',
          undefined,
          STAFF
        )
        assert.deepEqual(codes(refused), ['BAD_USER_INPUT'])
        const after = await env.server.app.service('employees').find({ paginate: false })
        assert.equal(after.length, before.length)
        const created = await graphql(
          env.server,
          'mutation { createOneEmployee(input: { employee: { name: "eve", email: "e@x", salary: 2, grade: 1, departmentId: 1 } }) { id name } }',
          undefined,
          STAFF
        )
        assert.equal(created.errors, undefined, JSON.stringify(created.errors))
        await env.server.app.service('employees').remove(created.data.createOneEmployee.id)
      })

      it('events: each socket.io connection gets the record under its own rules', async () => {
        const connect = (headers: Record<string, string>) =>
          io(env.server.baseUrl, { extraHeaders: headers, transports: ['websocket'] })
        const staffSocket = connect(STAFF)
        const adminSocket = connect(ADMIN)
        try {
          const heard: Record<string, any[]> = { staff: [], admin: [] }
          const staff = feathers().configure(socketioClient(staffSocket))
          const admin = feathers().configure(socketioClient(adminSocket))
          staff.service('employees').on('patched', (record: any) => heard.staff.push(record))
          admin.service('employees').on('patched', (record: any) => heard.admin.push(record))
          // Both connected and in the channel before the write.
          await staff.service('employees').get(1)
          await admin.service('employees').get(1)
          await http('/employees/1', STAFF, 'PATCH', { grade: 5 })
          await pollUntil(() => heard.staff.length === 1 && heard.admin.length === 1, 'both events')
          assertFields(heard.staff, HIDDEN, false)
          assertFields(heard.admin, HIDDEN, true)
          assert.equal(heard.staff[0].grade, 5)
        } finally {
          staffSocket.close()
          adminSocket.close()
        }
      })

      it('GraphQL subscriptions: a forbidden field is refused at subscribe; payloads carry what each may read', async () => {
        const client = (headers: Record<string, string>) =>
          createClient({
            url: wsUrl(env.server),
            webSocketImpl: class extends WebSocket {
              constructor(url: string, protocols?: string | string[]) {
                super(url, protocols, { headers })
              }
            },
            retryAttempts: 0,
            lazy: true
          })
        const staff = client(STAFF)
        try {
          const refusal = await new Promise<any>((resolve) => {
            staff.subscribe(
              { query: 'subscription { updatedOneEmployee { id salary } }' },
              { next: resolve, error: resolve, complete: () => resolve(undefined) }
            )
          })
          assert.match(JSON.stringify(refusal), /salary may not be read/)
          const payloads: any[] = []
          const subscribed = new Promise<void>((resolve) => {
            staff.subscribe(
              { query: 'subscription { updatedOneEmployee { id name grade } }' },
              { next: (value) => payloads.push(value), error: () => resolve(), complete: () => resolve() }
            )
          })
          await pollUntil(async () => {
            await http('/employees/2', ADMIN, 'PATCH', { grade: 6 })
            return payloads.length > 0
          }, 'a payload')
          assert.deepEqual(Object.keys(payloads[0].data.updatedOneEmployee).sort(), ['grade', 'id', 'name'])
          void subscribed
        } finally {
          await staff.dispose()
        }
      })
    })
  },
  fieldRulesApp
)
